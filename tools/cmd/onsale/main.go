// Command onsale runs an on-sale simulation on its own private local stack
// (PostgreSQL and Redis started like make dev, on other ports, wiped each
// run) and writes the report: onsale.json, onsale.md and onsale.svg. With
// -farm N it plays a scalper farm of N bots among the fans twice, with the
// defenses off and then on, and writes farm.{json,md} beside each phase's
// report.
package main

import (
	"context"
	"encoding/json"
	"errors"
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

	"github.com/catraca/catraca/shared/config"
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
	flag.IntVar(&o.Farm.Bots, "farm", 0, "scalper farm: this many bot accounts among the fans, played with the defenses off and then on (make onsale-farm passes 300; docs/simulator.md)")
	flag.IntVar(&o.Farm.Cards, "farm-cards", 5, "cards the farm's bots pay with")
	flag.IntVar(&o.Farm.Devices, "farm-devices", 3, "devices (cookie jars) the farm's bots share")
	flag.Float64Var(&o.Farm.FamilyShare, "family", 0.02, "share of fans paying with a family member's card (farm runs)")
	out := flag.String("out", "", "report folder (default docs/onsale, or docs/onsale-farm with -farm)")
	admitDelay := flag.Duration("admit-delay", 0, "admission starts this long after the draw (fans learn their places meanwhile; 0: at the draw, they learn them while admission runs)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (stack and fans) here")
	flag.Parse()
	if *out == "" {
		*out = "docs/onsale"
		if o.Farm.Bots > 0 {
			*out = "docs/onsale-farm"
		}
	}
	if o.Farm.Bots == 0 {
		o.Farm.FamilyShare = 0
	}
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
	if o.Farm.Bots == 0 {
		rep, err := play(ctx, env, o, admitDelay, onsale.Tune)
		return report(rep, err, out)
	}
	// The farm: the same on-sale with the defenses off, then on, each on
	// databases of its own.
	var phases []onsale.Phase
	var dirs []string
	var failed []error
	for _, off := range []bool{true, false} {
		name, dir, tune := "defenses on", "on", onsale.DefensesOn
		if off {
			name, dir, tune = "defenses off", "off", onsale.DefensesOff
		}
		log.Printf("farm phase: %s", name)
		rep, err := play(ctx, env, o, admitDelay, tune)
		if err := report(rep, err, filepath.Join(out, dir)); err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
		}
		if rep == nil || rep.Farm == nil {
			return errors.Join(failed...)
		}
		phases, dirs = append(phases, onsale.Phase{Name: name, Defenses: onsale.PhaseDefenses(off), Report: rep}), append(dirs, dir)
	}
	j, _ := json.MarshalIndent(phases, "", "  ")
	md := onsale.FarmMarkdown(phases, dirs)
	for name, b := range map[string][]byte{"farm.json": j, "farm.md": []byte(md)} {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Print(md)
	return errors.Join(failed...)
}

// play runs one on-sale on fresh databases of env, with the
// configuration tune leaves.
func play(ctx context.Context, env localenv.Env, o onsale.Options, admitDelay time.Duration, tune func(*config.Config)) (*onsale.Report, error) {
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
			return nil, err
		}
		if o.CommitDelay > 0 {
			if err := env.SetCommitDelay(ctx, db, o.CommitDelay); err != nil {
				return nil, err
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
	tune(&cfg)
	if _, err := migrate.Up(ctx, cfg.CatalogDSN, migrate.Catalog, 0); err != nil {
		return nil, err
	}
	for id, dsn := range cfg.Shards {
		if _, err := migrate.Up(ctx, dsn, migrate.Shard, id); err != nil {
			return nil, err
		}
	}
	st, err := stack.Start(ctx, cfg, stack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	o.Progress = func(s onsale.Sample) {
		fmt.Fprintf(os.Stderr, "\r t=%4.0fs  queue %7d  shopping %4d  admitted %7d  sold %6d  errors %d   ", s.T, s.Waiting, s.Active, s.Admitted, s.Sold, s.Errors)
	}
	rep, err := onsale.Run(ctx, st, env, o)
	fmt.Fprintln(os.Stderr)
	return rep, err
}

// report writes a run's report to out and says whether the run passed.
func report(rep *onsale.Report, err error, out string) error {
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
