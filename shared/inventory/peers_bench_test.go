package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/dev/apptest"
	"github.com/catraca/catraca/shared/dev/loadstat"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/organizer"
)

// peerTables are the open-source peers' inventory shapes, reduced to what a
// GA hold takes from: a quota whose positions are counted (pretix; its
// positions are the order items), one row per sellable unit (alf.io), one
// counter row (the naive design).
const peerTables = `
	CREATE TABLE peer_quotas (id INT PRIMARY KEY, size INT NOT NULL);
	CREATE INDEX ON order_items (pool_id);
	CREATE TABLE peer_units (id BIGSERIAL PRIMARY KEY, status TEXT NOT NULL, buyer BIGINT);
	CREATE INDEX ON peer_units (status, id);
	CREATE TABLE peer_counter (id INT PRIMARY KEY, size INT NOT NULL, sold INT NOT NULL);
	INSERT INTO peer_quotas VALUES (1, 10000000);
	INSERT INTO peer_counter VALUES (1, 10000000, 0);
	INSERT INTO peer_units (status) SELECT 'FREE' FROM generate_series(1, 100000);`

// peerResets empties every pool's holds between runs.
const peerResets = `TRUNCATE order_items, orders, hold_ga, holds CASCADE;
	UPDATE peer_units SET status = 'FREE', buyer = NULL WHERE status <> 'FREE';
	UPDATE peer_counter SET sold = 0`

// peerHold wraps a peer's take, CTEs ending in t that yield one row when
// they got a place, in the rows catraca's GA hold writes too (hold, pending
// order, item): the peers do the same job and differ only in how they take
// the place. $1 is the event, $2 the buyer, $3 the pool.
func peerHold(take string) string {
	return `WITH ` + take + `, h AS (
		INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
		SELECT $1, $2, now() + interval '5 minutes', 'ga', '\x00' FROM t RETURNING id
	), o AS (
		INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
		SELECT $1, $2, h.id, 1, 50, 'BRL' FROM h RETURNING id
	)
	INSERT INTO order_items (order_id, pool_id, quantity, label, price_level, price_cents)
	SELECT o.id, $3, 1, 'Floor × 1', 'GA', 50 FROM o`
}

// peerHolds take one GA place for a buyer the way each peer does, each in
// one round trip (a pipelined implicit transaction) like catraca's own.
var peerHolds = map[string][]string{
	// pretix: an event-wide lock (pg_advisory_lock on PostgreSQL) around
	// counting the quota's positions; held to the commit, so the buyers of
	// one event commit one at a time. The count runs in a statement after
	// the lock so that its snapshot sees the previous holder's commit.
	"pretix-advisory-lock": {`SELECT pg_advisory_xact_lock(4242)`,
		peerHold(`t AS (SELECT 1 WHERE (SELECT count(*) FROM order_items WHERE pool_id = $3) < (SELECT size FROM peer_quotas WHERE id = 1))`)},
	// alf.io: one row per ticket; a hold locks a free row it can get
	// without waiting (FOR UPDATE SKIP LOCKED) and marks it pending.
	"alfio-skip-locked": {peerHold(`u AS (SELECT id FROM peer_units WHERE status = 'FREE' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED),
		t AS (UPDATE peer_units p SET status = 'PENDING', buyer = $2 FROM u WHERE p.id = u.id RETURNING p.id)`)},
	// naive: every hold decrements the same counter row.
	"naive-counter": {peerHold(`t AS (UPDATE peer_counter SET sold = sold + 1 WHERE id = 1 AND sold < size RETURNING id)`)},
}

// sendHold runs a peer's statements as one implicit transaction and checks
// that the last one wrote the item.
func sendHold(ctx context.Context, db *pgxpool.Pool, stmts []string, args ...any) error {
	b := &pgx.Batch{}
	for i, s := range stmts {
		if i == len(stmts)-1 {
			b.Queue(s, args...)
		} else {
			b.Queue(s)
		}
	}
	res := db.SendBatch(ctx, b)
	defer res.Close()
	var tag pgconn.CommandTag
	for range b.Len() {
		var err error
		if tag, err = res.Exec(); err != nil {
			return err
		}
	}
	if tag.RowsAffected() != 1 {
		return errPeerSoldOut
	}
	return res.Close()
}

// errPeerSoldOut means a peer's hold found nothing left; the pools are sized
// so that it never happens.
var errPeerSoldOut = errors.New("peer hold took nothing")

// BenchmarkPeers runs catraca's default GA hold beside the strategies the
// open-source peers use for the same job, in the same database and run.
func BenchmarkPeers(b *testing.B) {
	f := newFixture(b, 100, 10_000_000, func(s *organizer.EventSpec) { s.MaxPerAccount = 4 })
	ctx := context.Background()
	if _, err := f.shard.Exec(ctx, peerTables); err != nil {
		b.Fatal(err)
	}
	apptest.OpenShardConns(b, f.app)
	var poolID int64
	if err := f.shard.QueryRow(ctx, `SELECT id FROM ga_pools WHERE event_id = $1 AND code = 'FLOOR'`, f.event.ID).Scan(&poolID); err != nil {
		b.Fatal(err)
	}
	holds := map[string]func(buyer int64) error{
		"catraca-slotted": func(buyer int64) error {
			_, _, err := f.app.Inventory.Hold(ctx, f.event, inventory.Request{Account: buyer, Key: "ga", Pool: "FLOOR", Quantity: 1})
			return err
		},
	}
	for name, stmts := range peerHolds {
		holds[name] = func(buyer int64) error { return sendHold(ctx, f.shard, stmts, f.event.ID, buyer, poolID) }
	}
	run := 0
	for _, name := range []string{"catraca-slotted", "pretix-advisory-lock", "alfio-skip-locked", "naive-counter"} {
		for _, clients := range []int{16, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", name, clients), func(b *testing.B) {
				for range b.N {
					if _, err := f.shard.Exec(ctx, peerResets); err != nil {
						b.Fatal(err)
					}
					run++
					measureCPU(b, f.shard, "holds", clients, func(seq int) error {
						return holds[name](int64(run*1_000_000 + seq))
					})
				}
			})
		}
	}
}

// BenchmarkCommitLatency measures what one commit costs in this database:
// one client, one single-row UPDATE per transaction. Under the commit delay
// mode (CATRACA_TEST_COMMIT_DELAY) it shows the latency that mode gives.
func BenchmarkCommitLatency(b *testing.B) {
	f := newFixture(b, 100, 100)
	b.Run("one-row/commits", func(b *testing.B) {
		for range b.N {
			r, err := loadstat.CommitLatency(context.Background(), f.shard, 300)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.P50.Microseconds())/1000, "commit-p50-ms")
			b.ReportMetric(float64(r.P99.Microseconds())/1000, "commit-p99-ms")
			b.ReportMetric(r.PerSec, "commits/s")
		}
	})
}
