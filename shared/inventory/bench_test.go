package inventory_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/loadstat"
)

// benchOps is how many operations each benchmark case runs per b.N.
const benchOps = 1000

var clientCounts = []int{1, 16, 64}

// seatClients adds 4 clients to clientCounts for seat holds: under
// Aurora-like commits 4 clients leave the cores idle part of the time, so
// that figure shows the checks' cost where the commit, not the CPU, sets
// the pace.
var seatClients = []int{1, 4, 16, 64}

// seatRounds and seatOps size BenchmarkSeatHolds: every sample runs each
// variant seatRounds times for seatOps operations, interleaved.
const (
	seatRounds = 9
	seatOps    = 1000
)

// BenchmarkSeatHolds compares seat holds (two seats each, all distinct, so
// every hold succeeds) with two baselines that make the same change to the
// same rows: update, plain single-statement UPDATEs flipping two seats to
// held, and bound, which adds the hold, order and item rows but none of the
// hold's checks, order or idempotency record: no correct hold can beat it.
// The three run interleaved in one sample (see interleave), so that a
// ratio compares figures measured seconds apart, not minutes.
func BenchmarkSeatHolds(b *testing.B) {
	f := newFixture(b, 50000, 10, func(s *organizer.EventSpec) { s.MaxPerAccount, s.MaxPerHold = 4, 4 })
	apptest.OpenShardConns(b, f.app)
	ctx := context.Background()
	run := 0
	reset := func() error {
		_, err := f.shard.Exec(ctx, `TRUNCATE order_items, orders, holds CASCADE`)
		if err == nil {
			_, err = f.shard.Exec(ctx, `UPDATE event_seats SET status = 'available', hold_id = NULL, held_until = NULL WHERE status <> 'available'`)
		}
		return err
	}
	variants := []loadstat.Variant{
		{Name: "update", Op: func(seq int) error {
			_, err := f.shard.Exec(ctx, `UPDATE event_seats SET status = 'held', hold_id = $3, held_until = now() + interval '5 minutes'
				WHERE event_id = $1 AND seat_id = ANY($2)`, f.event.ID, f.seats[seq*2:seq*2+2], int64(seq+1))
			return err
		}},
		{Name: "bound", Op: func(seq int) error {
			_, err := f.shard.Exec(ctx, holdWrites, f.event.ID, f.seats[seq*2:seq*2+2], int64(seq+1), strconv.Itoa(seq))
			return err
		}},
		{Name: "hold", Op: func(seq int) error {
			_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{
				Account: int64(run*1_000_000 + seq), Key: strconv.Itoa(seq), Seats: f.seats[seq*2 : seq*2+2]})
			return err
		}},
	}
	for _, clients := range seatClients {
		b.Run(fmt.Sprintf("interleaved/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				interleave(b, f.shard, clients, seatRounds, seatOps, func() error { run++; return reset() }, variants,
					[2]string{"hold", "bound"}, [2]string{"bound", "update"})
			}
		})
	}
}

// interleave runs every variant rounds times for ops operations each over
// clients, interleaved (loadstat.Interleave), with reset before each run;
// besides throughput and latency it reports the CPU (shard backends and
// this process) and the WAL bytes each operation cost.
func interleave(b *testing.B, shard loadstat.Querier, clients, rounds, ops int, reset func() error, variants []loadstat.Variant, pairs ...[2]string) {
	interleaveWith(b, shard, 0, clients, rounds, ops, reset, variants, pairs...)
}

// interleaveWith is interleave that also reports the CPU the process pooler
// (a pid, 0 for none: PgBouncer) spent per operation ("pooler-cpu-ms/op"),
// which neither the shard's backends nor this process include.
func interleaveWith(b *testing.B, shard loadstat.Querier, pooler, clients, rounds, ops int, reset func() error, variants []loadstat.Variant, pairs ...[2]string) {
	ctx := context.Background()
	loadstat.Interleave(b, rounds, variants, func(v loadstat.Variant) loadstat.Metrics {
		if err := reset(); err != nil {
			b.Fatal(err)
		}
		wal0 := walBytes(b, shard)
		pooled0 := loadstat.ProcCPU(pooler)
		cpu := loadstat.StartCPU(ctx, shard)
		res := loadstat.Run(clients, ops, v.Op)
		c := cpu.Stop(ctx)
		pooled := loadstat.ProcCPU(pooler) - pooled0
		wal := walBytes(b, shard) - wal0
		if res.Errors > 0 {
			b.Fatalf("%s: %d of %d operations failed", v.Name, res.Errors, ops)
		}
		n := float64(ops)
		m := loadstat.Metrics{"ops/s": res.PerSec, "p50-ms": loadstat.Ms(res.P50), "p99-ms": loadstat.Ms(res.P99),
			"db-cpu-ms/op": loadstat.Ms(c.DB) / n, "go-cpu-ms/op": loadstat.Ms(c.Go) / n, "wal-bytes/op": wal / n}
		if pooler > 0 {
			m["pooler-cpu-ms/op"] = loadstat.Ms(pooled) / n
		}
		return m
	}, pairs...)
}

// walBytes is the server's WAL position in bytes. On the benchmarks' private
// server (benchreport) nothing else writes, so the difference over a run is
// that run's WAL: the data it wrote, whatever the CPU it took.
func walBytes(b *testing.B, shard loadstat.Querier) float64 {
	rows, err := shard.Query(context.Background(), `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8`)
	if err != nil {
		b.Fatal(err)
	}
	n, err := pgx.CollectExactlyOneRow(rows, pgx.RowTo[float64])
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// measureCPU runs op benchOps times over clients and reports throughput,
// latency and the CPU each operation cost in this process (the Go code
// under test and the load generator) and in the shard's backends, so that a
// gap between two figures can be placed in Go or in SQL.
func measureCPU(b *testing.B, shard loadstat.Querier, unit string, clients int, op func(seq int) error) {
	ctx := context.Background()
	cpu := loadstat.StartCPU(ctx, shard)
	r := loadstat.Run(clients, benchOps, op)
	loadstat.ReportCPU(b, cpu.Stop(ctx), benchOps)
	loadstat.Report(b, r, unit)
}

// holdWrites makes a hold's writes for seats $2 of event $1, account $3,
// key $4, without the limit check, the lock, the compare-and-set condition
// or the response rows.
const holdWrites = `WITH h AS (
		INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
		VALUES ($1, $3, now() + interval '5 minutes', $4, '\x00') RETURNING id
	), s AS (
		UPDATE event_seats SET status = 'held', hold_id = (SELECT id FROM h), held_until = now() + interval '5 minutes'
		WHERE event_id = $1 AND seat_id = ANY($2) RETURNING id, price_level, price_cents
	), o AS (
		INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
		SELECT $1, $3, (SELECT id FROM h), count(*), sum(price_cents), 'BRL' FROM s RETURNING id
	)
	INSERT INTO order_items (order_id, event_seat_id, quantity, label, price_level, price_cents)
	SELECT o.id, s.id, 1, 'seat', s.price_level, s.price_cents FROM s, o`

// BenchmarkGAHolds compares a single counter row with the slotted counters
// at growing concurrency; every hold takes one place from a pool that never
// runs out.
func BenchmarkGAHolds(b *testing.B) {
	for _, strategy := range []struct {
		name  string
		slots int
	}{{"single-row", 1}, {"slotted-64", 64}} {
		f := newFixture(b, 100, 10_000_000, func(s *organizer.EventSpec) { s.GASlots = strategy.slots; s.MaxPerAccount = 4 })
		apptest.OpenShardConns(b, f.app)
		ctx := context.Background()
		run := 0
		for _, clients := range clientCounts {
			b.Run(fmt.Sprintf("%s/clients=%d", strategy.name, clients), func(b *testing.B) {
				for range b.N {
					// New buyers every run: -count runs a sub-benchmark again on
					// the same fixture, and a buyer's second "ga" hold would be
					// an idempotent replay, not a hold.
					run++
					r := loadstat.Run(clients, benchOps, func(seq int) error {
						_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{
							Account: int64(run*1_000_000 + seq), Key: "ga", Pool: "FLOOR", Quantity: 1})
						return err
					})
					loadstat.Report(b, r, "ops")
				}
			})
		}
	}
}
