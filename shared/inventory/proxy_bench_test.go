package inventory_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"testing"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/loadstat"
	"github.com/catraca/catraca/tools/testenv"
)

// Sizes of BenchmarkHoldModes: every sample runs each variant modeRounds
// times for modeOps holds, interleaved: many short rounds, so that the load
// other work puts on the shared cores weighs on a pair's two runs alike.
const (
	modeRounds = 11
	modeOps    = 400
)

// BenchmarkHoldModes measures the hold as production sends it beside the
// hold as the benchmarks above send it, in the same run on the same event:
//
//   - prepared: direct connections whose statements are prepared by name
//     and planned when the connection opens (shardstore.Warm), the mode
//     without a proxy;
//   - proxy: through PgBouncer in transaction pooling mode with
//     CATRACA_DB_PROXY on, as the functions reach RDS Proxy: every
//     statement unnamed, parsed and planned on every execution, on
//     whichever server connection is free;
//   - unnamed: the proxy mode's statements on direct connections, which
//     separates the statements' cost from the pooler's hop.
//
// Each is run for seat holds (two seats) and GA holds (one place); the
// ratios to the prepared mode are paired per round.
func BenchmarkHoldModes(b *testing.B) {
	f := newFixture(b, 2*modeOps, 10_000_000, func(s *organizer.EventSpec) { s.MaxPerAccount, s.MaxPerHold = 4, 4 })
	apptest.OpenShardConns(b, f.app)
	ctx := context.Background()
	open := func(c config.Config) *app.App {
		a, err := app.Open(ctx, c, app.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(a.Close)
		apptest.OpenShardConns(b, a)
		return a
	}
	// Like with like: the pooler must keep as many server connections per
	// database as the prepared mode's pool, or the proxy mode is measured
	// on fewer backends (the shared test pooler keeps 4: 0.49× prepared
	// through it, against 0.83–0.89× through benchreport's, which keeps 32).
	if size, err := testenv.Env(b).PoolerPoolSize(ctx); err != nil || size < int(f.app.Config.DBMaxConns) {
		b.Fatalf("the pooler keeps %d server connections per database (%v) against the prepared pool's %d: run this benchmark through infra/benchreport, whose private pooler keeps as many",
			size, err, f.app.Config.DBMaxConns)
	}
	// PgBouncer's own CPU is in neither the backends' nor this process's.
	pooler, err := testenv.Env(b).PoolerPID(ctx)
	if err != nil {
		b.Fatal(err)
	}
	unnamed := f.app.Config
	unnamed.DBProxy = true
	apps := map[string]*app.App{"prepared": f.app, "proxy": open(testenv.Proxied(b, f.app.Config)), "unnamed": open(unnamed)}
	run := 0
	reset := func() error {
		run++
		_, err := f.shard.Exec(ctx, `TRUNCATE order_items, orders, holds CASCADE`)
		if err == nil {
			_, err = f.shard.Exec(ctx, `UPDATE event_seats SET status = 'available', hold_id = NULL, held_until = NULL WHERE status <> 'available'`)
		}
		return err
	}
	var variants []loadstat.Variant
	var pairs [][2]string
	for _, kind := range []string{"seat", "ga"} {
		for _, mode := range []string{"prepared", "proxy", "unnamed"} {
			a := apps[mode]
			variants = append(variants, loadstat.Variant{Name: kind + "-" + mode, Op: func(seq int) error {
				req := inventory.Request{Account: int64(run*1_000_000 + seq), Key: strconv.Itoa(seq), Pool: "FLOOR", Quantity: 1}
				if kind == "seat" {
					req = inventory.Request{Account: req.Account, Key: req.Key, Seats: f.seats[seq*2 : seq*2+2]}
				}
				_, _, err := a.Inventory.Hold(ctx, f.event, req)
				return err
			}})
			if mode != "prepared" {
				pairs = append(pairs, [2]string{kind + "-" + mode, kind + "-prepared"})
			}
		}
	}
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("interleaved/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				interleaveWith(b, f.shard, pooler, clients, modeRounds, modeOps, reset, variants, pairs...)
			}
		})
	}
}
