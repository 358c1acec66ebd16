// Command devstack runs the whole of catraca on one machine: private
// PostgreSQL and Redis, the catalog and two shard databases, migrations, the
// demo seed and the API on http://localhost:8080. Ctrl-C stops everything;
// data stays for the next run unless -reset is given.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/migrate"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/tools/demo"
	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/stack"
)

func main() {
	reset := flag.Bool("reset", false, "stop the local servers and delete all local data, then exit")
	servicesOnly := flag.Bool("services", false, "start PostgreSQL and Redis, create and migrate the databases, print the environment, then exit")
	addr := flag.String("addr", "127.0.0.1:8080", "HTTP listen address")
	flag.Parse()
	log.SetFlags(0)

	root, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	env := localenv.Env{Dir: localenv.DataDir(root, ".local/dev"), PGPort: 54329, RedisPort: 63790}
	if *reset {
		if err := env.Down(); err != nil {
			log.Printf("stop servers: %v", err)
		}
		if err := os.RemoveAll(env.Dir); err != nil {
			log.Fatal(err)
		}
		log.Printf("local data in %s deleted", env.Dir)
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, env, *addr, *servicesOnly); err != nil {
		log.Fatalf("devstack: %v", err)
	}
}

func run(ctx context.Context, env localenv.Env, addr string, servicesOnly bool) error {
	log.Printf("starting PostgreSQL on :%d and Redis on :%d (data in %s)", env.PGPort, env.RedisPort, env.Dir)
	if err := env.Up(ctx); err != nil {
		return err
	}
	if !servicesOnly {
		defer func() {
			log.Printf("stopping PostgreSQL and Redis")
			if err := env.Down(); err != nil {
				log.Printf("stop: %v", err)
			}
		}()
	}
	vars, err := environment(env, addr)
	if err != nil {
		return err
	}
	stripeMode, err := useStripe(vars)
	if err != nil {
		return err
	}
	for k, v := range vars {
		os.Setenv(k, v)
	}
	cfg, err := config.Load[config.Config]()
	if err != nil {
		return err
	}
	for _, db := range []string{"catraca_catalog", "catraca_shard_1", "catraca_shard_2"} {
		if err := env.CreateDatabase(ctx, db, ""); err != nil {
			return fmt.Errorf("create %s: %w", db, err)
		}
	}
	if _, err := migrate.Up(ctx, cfg.CatalogDSN, migrate.Catalog, 0); err != nil {
		return stale(err)
	}
	for _, id := range cfg.ShardIDs() {
		if _, err := migrate.Up(ctx, cfg.Shards[id], migrate.Shard, id); err != nil {
			return stale(err)
		}
	}
	if servicesOnly {
		for _, k := range sortedKeys(vars) {
			fmt.Printf("export %s=%q\n", k, vars[k])
		}
		return nil
	}
	st, err := stack.Start(ctx, cfg, stack.Options{Addr: addr, PSPAddr: "127.0.0.1:8090",
		PSPFaults: pspsim.Faults{RatePerSecond: 100}, ExternalPSP: stripeMode})
	if err != nil {
		return err
	}
	defer st.Close()
	a := st.App
	seed, err := demo.Seed(ctx, a.Accounts, pgstore.New(a.Catalog), organizer.New(a.Catalog, a.Shards), a.Events)
	if err != nil {
		return err
	}
	url := st.URL
	psp := "PSP simulator:   http://localhost:8090 (test card 4242 4242 4242 4242)"
	if stripeMode {
		psp = "PSP:             Stripe test mode (test card 4242 4242 4242 4242); webhooks through the Stripe CLI (README)"
	}
	if seed.Created && !stripeMode { // the demo fans pay on the simulator's page
		log.Printf("demo data seeded; demo fans are buying seats of event %d", seed.OnSale)
		paid, err := demo.Sell(ctx, url, seed.OnSale, demoBuyers)
		if err != nil {
			log.Printf("demo sale: %v", err)
		}
		log.Printf("demo sale: %d orders paid", paid)
	}
	fmt.Printf(`
  catraca is running at %s   (open it in a browser)

  demo fan:        %s / %s
  demo organizer:  %s / %s
  organizer console: %s/login?next=/organizer/events/%d (log in as the demo organizer)
  on sale now:     %s/events/%d (waiting room on)
  health:          %s/healthz
  %s
  mailbox:         %s

  Ctrl-C stops everything; data is kept (make dev-reset wipes it).

`, url, demo.FanEmail, demo.Password, demo.OrganizerEmail, demo.Password, url, seed.OnSale, url, seed.OnSale, url, psp, cfg.Mailbox)
	<-ctx.Done()
	return nil
}

// demoBuyers is how many demo fans buy two seats each of the demo on-sale
// on the first run, so the console opens on a sale in progress.
const demoBuyers = 12

// secretFormats names every secret of the local stack and renders one from
// 32 random bytes: signing keys as kid:base64, the PSP API key (which the
// simulator checks) as a Stripe-style test key.
var secretFormats = map[string]func([]byte) string{
	"CATRACA_SESSION_KEYS":        signingKey,
	"CATRACA_ADMISSION_KEYS":      signingKey,
	"CATRACA_TICKET_KEY":          signingKey,
	"CATRACA_PSP_WEBHOOK_SECRETS": func(b []byte) string { return "whsec_" + base64.StdEncoding.EncodeToString(b) },
	"CATRACA_PSP_API_KEY":         func(b []byte) string { return "sk_test_" + hex.EncodeToString(b) },
}

// useStripe switches vars to Stripe's test mode when STRIPE_SECRET_KEY is
// set: the app calls Stripe with that key and verifies webhooks with
// STRIPE_WEBHOOK_SECRET, the secret `stripe listen` prints (README).
func useStripe(vars map[string]string) (bool, error) {
	key := os.Getenv("STRIPE_SECRET_KEY")
	if key == "" {
		return false, nil
	}
	if !strings.HasPrefix(key, "sk_test_") && !strings.HasPrefix(key, "rk_test_") {
		return false, fmt.Errorf("STRIPE_SECRET_KEY must be a test-mode key (sk_test_…): make dev never takes real money")
	}
	secret := os.Getenv("STRIPE_WEBHOOK_SECRET")
	if !strings.HasPrefix(secret, "whsec_") {
		return false, fmt.Errorf("STRIPE_WEBHOOK_SECRET must be the whsec_… secret that `stripe listen --forward-to localhost:8080/api/psp/webhook --print-secret` prints")
	}
	vars["CATRACA_PSP_API_KEY"], vars["CATRACA_PSP_WEBHOOK_SECRETS"], vars["CATRACA_PSP_URL"] = key, secret, "https://api.stripe.com"
	return true, nil
}

func signingKey(b []byte) string {
	return "k" + strconv.FormatInt(time.Now().Unix(), 36) + ":" + base64.StdEncoding.EncodeToString(b)
}

// environment returns the CATRACA_* variables of the local stack. Secrets
// are generated once into a git-ignored file (.local/dev/secrets.env),
// never committed; one missing from an older file is added.
func environment(env localenv.Env, addr string) (map[string]string, error) {
	secrets := filepath.Join(env.Dir, "secrets.env")
	keys := map[string]string{}
	if b, err := os.ReadFile(secrets); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				keys[k] = v
			}
		}
	}
	changed := false
	for name, format := range secretFormats {
		if keys[name] == "" {
			b := make([]byte, 32)
			rand.Read(b)
			keys[name] = format(b)
			changed = true
		}
	}
	if changed {
		var sb strings.Builder
		for _, k := range sortedKeys(keys) {
			sb.WriteString(k + "=" + keys[k] + "\n")
		}
		if err := os.WriteFile(secrets, []byte(sb.String()), 0o600); err != nil {
			return nil, err
		}
	}
	vars := map[string]string{
		"CATRACA_PUBLIC_URL":  "http://" + strings.Replace(addr, "127.0.0.1", "localhost", 1),
		"CATRACA_CATALOG_DSN": env.DSN("catraca_catalog"),
		"CATRACA_SHARD_DSNS":  "1=" + env.DSN("catraca_shard_1") + ",2=" + env.DSN("catraca_shard_2"),
		"CATRACA_REDIS_ADDR":  env.RedisAddr(),
		"CATRACA_PSP_URL":     "http://127.0.0.1:8090",
		"CATRACA_MAILBOX":     filepath.Join(env.Dir, "mailbox"),
		// The search snapshot as the S3 store keeps it in AWS.
		"CATRACA_SEARCH_SNAPSHOT": filepath.Join(env.Dir, "search"),
	}
	for k, v := range keys {
		vars[k] = v
	}
	for k := range vars {
		if v, ok := os.LookupEnv(k); ok && v != "" {
			vars[k] = v // the caller's environment wins
		}
	}
	return vars, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// stale says what to do when the local databases were made by another
// version of the code (a branch whose migrations main numbers otherwise):
// goose refuses migrations older than the database's newest.
func stale(err error) error {
	if strings.Contains(err.Error(), "out-of-order") {
		return fmt.Errorf("%w\nThe local databases were made by another version of catraca: `make dev-reset` wipes them (the demo data is made again)", err)
	}
	return err
}
