// Command onsale runs an on-sale simulation on its own private local stack
// (PostgreSQL and Redis started like make dev, on other ports, wiped each
// run) and writes the report: onsale.json, onsale.md and onsale.svg.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/migrate"
	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/onsale"
	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
)

func main() {
	o := onsale.Options{}
	flag.IntVar(&o.Fans, "fans", 100000, "fans in line (make onsale passes -fans 5000 for a quick demo)")
	flag.IntVar(&o.Seats, "seats", 5000, "reserved seats (at least; the stadium generator rounds up)")
	flag.IntVar(&o.GA, "ga", 1000, "standing places")
	flag.IntVar(&o.Ceiling, "ceiling", 250, "shoppers at once (see docs/simulator.md, Choosing the ceiling)")
	flag.IntVar(&o.Workers, "workers", 64, "concurrent HTTP clients")
	flag.IntVar(&o.PSPRate, "psp-rate", 100, "the PSP's API limit, operations per second (Stripe's default live-mode limit is 100)")
	flag.DurationVar(&o.Think, "think", 10*time.Second, "longest a fan looks at the map before holding, and at the order before paying")
	flag.Float64Var(&o.DeclineRate, "decline", 0.05, "share of first payments declined")
	flag.Float64Var(&o.AbandonRate, "abandon", 0.05, "share of holds abandoned")
	flag.IntVar(&o.HoldTTL, "hold-ttl", 60, "hold lifetime, seconds")
	flag.IntVar(&o.ActiveTTL, "active-ttl", 120, "shopping slot lifetime, seconds")
	flag.StringVar(&o.Chaos, "chaos", "", "one of: "+strings.Join(onsale.ChaosModes, ", "))
	flag.IntVar(&o.CommitDelay, "commit-delay", 0, "Aurora-like commit latency: commit_delay (µs) on the shard databases (make bench uses 2000; 0: local commits)")
	flag.DurationVar(&o.Deadline, "deadline", 20*time.Minute, "stop after this long")
	out := flag.String("out", "docs/onsale", "report folder")
	admitDelay := flag.Duration("admit-delay", 0, "admission starts this long after the draw (fans learn their places meanwhile; 0: at the draw, they learn them while admission runs)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (stack and fans) here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	log.SetFlags(0)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, *admitDelay, *out); err != nil {
		log.Printf("onsale: %v", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ctx context.Context, o onsale.Options, admitDelay time.Duration, out string) error {
	root := testenv.RepoRoot()
	env := localenv.Env{Dir: localenv.DataDir(root, ".local/onsale"), PGPort: 54349, RedisPort: 63799}
	log.Printf("starting PostgreSQL on :%d and Redis on :%d", env.PGPort, env.RedisPort)
	if err := env.Up(ctx); err != nil {
		return err
	}
	defer env.Down()
	stamp := time.Now().Format("150405")
	dbs := map[string]string{"catalog": "onsale_catalog_" + stamp, "1": "onsale_shard1_" + stamp, "2": "onsale_shard2_" + stamp}
	// Each run's databases go when it ends: left behind, they pile up and
	// a pg-restart run's crash recovery spends a minute syncing their files.
	defer func() {
		for _, db := range dbs {
			if err := env.DropDatabase(context.Background(), db); err != nil {
				log.Printf("drop %s: %v", db, err)
			}
		}
	}()
	for _, db := range dbs {
		if err := env.CreateDatabase(ctx, db, ""); err != nil {
			return err
		}
		if o.CommitDelay > 0 {
			if err := env.SetCommitDelay(ctx, db, o.CommitDelay); err != nil {
				return err
			}
		}
	}
	cfg := testenv.BaseConfig()
	cfg.CatalogDSN = env.DSN(dbs["catalog"])
	cfg.Shards = map[int]string{1: env.DSN(dbs["1"]), 2: env.DSN(dbs["2"])}
	cfg.RedisAddr = env.RedisAddr()
	cfg.RedisPrefix = "onsale" + stamp + ":"
	cfg.PSPRate = float64(o.PSPRate)
	cfg.RoomAdmitDelay = admitDelay
	cfg.DBMinConns = cfg.DBMaxConns
	onsale.Tune(&cfg)
	if _, err := migrate.Up(ctx, cfg.CatalogDSN, migrate.Catalog, 0); err != nil {
		return err
	}
	for id, dsn := range cfg.Shards {
		if _, err := migrate.Up(ctx, dsn, migrate.Shard, id); err != nil {
			return err
		}
	}
	st, err := stack.Start(ctx, cfg, stack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer st.Close()
	o.Progress = func(s onsale.Sample) {
		fmt.Fprintf(os.Stderr, "\r t=%4.0fs  queue %7d  shopping %4d  admitted %7d  sold %6d  errors %d   ", s.T, s.Waiting, s.Active, s.Admitted, s.Sold, s.Errors)
	}
	rep, err := onsale.Run(ctx, st, env, o)
	fmt.Fprintln(os.Stderr)
	if rep == nil {
		return err
	}
	if err != nil {
		// A run cut short (the deadline, Ctrl-C) still says what it did.
		rep.Violations = append(rep.Violations, "run ended early: "+err.Error())
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	j, _ := json.MarshalIndent(rep, "", "  ")
	for name, b := range map[string][]byte{"onsale.json": j, "onsale.md": []byte(rep.Markdown()), "onsale.svg": []byte(rep.SVG())} {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Print(rep.Markdown())
	if err != nil {
		return err
	}
	if len(rep.Violations) > 0 {
		return fmt.Errorf("%d invariant violations", len(rep.Violations))
	}
	return nil
}
