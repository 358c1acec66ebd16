package shardstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/loadstat"
	"github.com/catraca/catraca/tools/testenv"
)

// The peers benchmark samples every strategy for the same time, round after
// round, in an order that rotates each round, so that a swing of the
// machine's load falls on all of them alike; it reports each one's medians.
const (
	peerSample = time.Second
	peerRounds = 3
	peerEvent  = 1
)

// peerClients are the client counts the peers are compared at.
var peerClients = []int{16, 64}

// peerPlaces are the places a hold takes: one, where alf.io's one row per
// place writes no more rows than a slot counter, and a pair.
var peerPlaces = []int{1, 2}

// peerCase names a strategy's sub-benchmark for holds of places.
func peerCase(strategy string, places, clients int) string {
	if places > 1 {
		strategy += "-" + strconv.Itoa(places) + "-places"
	}
	return strategy + "/clients=" + strconv.Itoa(clients)
}

// peerTables are what the peers keep that catraca does not: alf.io's one
// row per sellable unit (its ticket table: status, and the reservation that
// holds it), with an index of the free units in the order its query takes
// them, which alf.io lacks (its indexes are on single columns: the planner
// walked the primary key past every taken unit, tens of milliseconds a
// hold), and the index a quota count reads the pool's order items through
// (pretix counts order positions by item).
const peerTables = `
	CREATE TABLE peer_units (id BIGSERIAL PRIMARY KEY, pool_id BIGINT NOT NULL, state TEXT NOT NULL, hold_id BIGINT);
	CREATE INDEX ON peer_units (id) WHERE state = 'FREE';
	CREATE INDEX ON order_items (pool_id);`

// peerReset gives every place back before a sample, so every strategy
// starts from the same state: no holds or orders, every slot and unit free
// and vacuumed.
var peerReset = []string{
	`TRUNCATE order_items, orders, holds CASCADE`,
	`UPDATE peer_units SET state = 'FREE', hold_id = NULL WHERE state <> 'FREE'`,
	`UPDATE ga_slots s SET remaining = p.capacity / p.slots FROM ga_pools p WHERE p.id = s.pool_id AND s.remaining <> p.capacity / p.slots`,
	`VACUUM ANALYZE peer_units, ga_slots`,
}

// pretixLocks are pretix's locks for a sale from one quota (pretix 2023.8
// and later, PostgreSQL advisory locks): shared on the event, exclusive on
// the quota, held to the commit. They are taken in a statement of their own
// before the hold's, so that the count in the hold, whose snapshot comes
// later, sees every earlier holder's commit; pretix also locks right before
// it counts.
func pretixLocks(quota int64) step {
	return step{`SELECT pg_advisory_xact_lock_shared(hashtextextended('event:' || $1::bigint, 0)),
		pg_advisory_xact_lock(hashtextextended('quota:' || $2::bigint, 0))`, []any{int64(peerEvent), quota}}
}

// pretixTake is pretix's take of $2 places of pool $1: count what the
// quota's holds and orders use (pretix counts the positions of pending and
// paid orders and the cart positions not yet expired) and order the places
// if the quota has room.
var pretixTake = takeSQL(`used AS (
			SELECT coalesce(sum(i.quantity), 0) AS n FROM order_items i JOIN orders po ON po.id = i.order_id JOIN holds ph ON ph.id = po.hold_id
			WHERE (SELECT ok FROM lim) AND i.pool_id = $1
			  AND (po.status = 'paid' OR (po.status = 'pending' AND ph.status = 'active' AND ph.expires_at > now()))
		), src AS (SELECT h.id AS hold_id, h.expires_at, `+poolColumns("p", "$2::int", "NULL::int[]")+` FROM h, ga_pools p, used WHERE p.id = $1 AND used.n + $2 <= p.capacity)`,
	2, noSlot, true)

// alfioTake is alf.io's take of places of pool $1: lock the first free unit
// rows it can get without waiting (FOR UPDATE SKIP LOCKED, lowest ids
// first), mark them pending for this hold, and order as many places as it
// marked. The limit is written into the statement, as alf.io's update names
// its ids: with a parameter, the generic plan expects a tenth of the table
// and hashes all of it to update one row.
func alfioTake(quantity int) string {
	return takeSQL(`free AS (
			SELECT id FROM peer_units WHERE (SELECT ok FROM lim) AND pool_id = $1 AND state = 'FREE' ORDER BY id LIMIT `+strconv.Itoa(quantity)+` FOR UPDATE SKIP LOCKED
		), marked AS (
			UPDATE peer_units u SET state = 'PENDING', hold_id = `+newHold+` FROM free WHERE u.id = free.id RETURNING u.id
		), src AS (SELECT h.id AS hold_id, h.expires_at, `+poolColumns("p", "m.n", "NULL::int[]")+` FROM h, ga_pools p, (SELECT count(*)::int AS n FROM marked) m WHERE p.id = $1 AND m.n > 0)`,
		1, noSlot, true)
}

// lockedTake runs a statement taking locks and then a one-statement take,
// in one round trip and one implicit transaction.
func (s *Store) lockedTake(ctx context.Context, lock, take step) error {
	b := &pgx.Batch{}
	b.Queue(lock.sql, lock.args...)
	b.Queue(take.sql, take.args...)
	br := s.db.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			var h Held
			err = scanOrder(rows, &h, &h.ID, &h.ExpiresAt)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return classify(err)
}

// peerStrategy is one way to take a GA place, inside the same hold.
type peerStrategy struct {
	name string
	take func(ctx context.Context, h NewHold, quantity int) error
}

// peerFixture is a shard with one pool per strategy.
type peerFixture struct {
	db      *pgxpool.Pool
	st      *Store
	retries atomic.Int64 // catraca's takes again after finding no free slot
}

func newPeerFixture(b testing.TB) (*peerFixture, []peerStrategy) {
	ctx := context.Background()
	dbs := testenv.NewDatabases(b, 1)
	cfg, err := pgxpool.ParseConfig(dbs.DSN(dbs.Shards[1]))
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 32 // as the tests' and benchmarks' app (testenv.BaseConfig)
	cfg.AfterConnect = Warm
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Close)
	f := &peerFixture{db: db, st: New(db)}
	pools := map[string]Pool{}
	for _, p := range []NewPool{
		{Code: "SLOTTED", Capacity: 64_000_000, Slots: 64},
		{Code: "COUNTER", Capacity: 10_000_000, Slots: 1},
		{Code: "QUOTA", Capacity: 10_000_000, Slots: 1},
		{Code: "UNITS", Capacity: 200_000, Slots: 1},
	} {
		p.Name, p.PriceLevel, p.PriceCents = "Floor", "GA", 50
		err := f.st.WithTx(ctx, func(tx Tx) error { return tx.CreatePool(ctx, peerEvent, p) })
		if err == nil {
			pools[p.Code], _, err = f.st.PoolOf(ctx, peerEvent, p.Code)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, peerTables); err == nil {
		_, err = db.Exec(ctx, `INSERT INTO peer_units (pool_id, state) SELECT $1, 'FREE' FROM generate_series(1, 200000)`, pools["UNITS"].ID)
	} else {
		b.Fatal(err)
	}
	return f, []peerStrategy{
		{"catraca-slotted", func(ctx context.Context, h NewHold, quantity int) error {
			return f.catraca(ctx, h, pools["SLOTTED"], quantity)
		}},
		{"pretix-quota-lock", func(ctx context.Context, h NewHold, quantity int) error {
			return f.st.lockedTake(ctx, pretixLocks(pools["QUOTA"].ID), step{pretixTake, oneStatement(h, []any{pools["QUOTA"].ID, quantity}, quantity)})
		}},
		{"alfio-skip-locked", func(ctx context.Context, h NewHold, quantity int) error {
			_, err := f.st.take(ctx, step{alfioTake(quantity), oneStatement(h, []any{pools["UNITS"].ID}, quantity)})
			return err
		}},
		{"naive-counter", func(ctx context.Context, h NewHold, quantity int) error {
			_, err := f.st.TakeGA(ctx, h, pools["COUNTER"], quantity)
			return err
		}},
	}
}

// catraca is the production GA hold as inventory runs it: the one-round-trip
// take, again after a short pause when every slot it tried was locked.
func (f *peerFixture) catraca(ctx context.Context, h NewHold, p Pool, quantity int) error {
	for try := 0; ; try++ {
		_, err := f.st.TakeGA(ctx, h, p, quantity)
		if !errors.Is(err, ErrNoSlot) || try == 20 {
			return err
		}
		f.retries.Add(1)
		time.Sleep(time.Duration(50+rand.IntN(200*(try+1))) * time.Microsecond)
	}
}

// peerResult is what one sample of a strategy measured.
type peerResult struct {
	loadstat.Result
	cpu     loadstat.CPU
	retries int64
}

// TestPeersDoTheSameJob: every strategy of the peers benchmark holds
// places under the same rules as catraca's: a second hold with the same key
// is refused as a used key, a hold past the account's limit as over the
// limit, and each writes the hold, its pending order and the item with the
// quantity asked.
func TestPeersDoTheSameJob(t *testing.T) {
	t.Parallel()
	f, strategies := newPeerFixture(t)
	ctx := context.Background()
	for i, s := range strategies {
		h := NewHold{EventID: peerEvent, Account: int64(i + 1), TTL: 300, Key: "a", Hash: []byte{1}, Currency: "BRL", MaxPerAccount: 2}
		require.NoError(t, s.take(ctx, h, 2), s.name)
		require.ErrorIs(t, s.take(ctx, h, 2), ErrKeyUsed, s.name)
		h.Key = "b"
		require.ErrorIs(t, s.take(ctx, h, 1), ErrOverLimit, s.name)
	}
	var holds, orders, places, units int
	require.NoError(t, f.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM holds), (SELECT count(*) FROM orders WHERE status = 'pending'),
		(SELECT sum(quantity) FROM order_items), (SELECT count(*) FROM peer_units WHERE state = 'PENDING')`).Scan(&holds, &orders, &places, &units))
	require.Equal(t, []int{4, 4, 8, 2}, []int{holds, orders, places, units})
}

// sample resets the shard and runs s over clients for peerSample, each hold
// of places by a new buyer with the same rules: a limit of 4 per account, a
// five-minute hold, an idempotency key with the request's fingerprint.
func (f *peerFixture) sample(b *testing.B, s peerStrategy, clients, places, id int) peerResult {
	ctx := context.Background()
	for _, q := range peerReset {
		if _, err := f.db.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	f.retries.Store(0)
	cpu := loadstat.StartCPU(ctx, f.db)
	r := loadstat.RunFor(clients, peerSample, func(seq int) error {
		account := int64(id)*10_000_000 + int64(seq)
		sum := sha256.Sum256(fmt.Appendf(nil, "e=1;pool=GA;q=%d;account=%d", places, account))
		return s.take(ctx, NewHold{EventID: peerEvent, Account: account, TTL: 300, Key: "ga", Hash: sum[:],
			Currency: "BRL", MaxPerAccount: 4}, places)
	})
	return peerResult{Result: r, cpu: cpu.Stop(ctx), retries: f.retries.Load()}
}

// BenchmarkPeers runs catraca's GA hold beside the strategies the
// open-source peers use to take places, in the same database and run, for
// holds of one place and of two. Every strategy does the same job through
// the same code: the hold row with the account's limit lock and
// idempotency key, the per-account limit check, the pending order and its
// item, one round trip; only the take differs (docs/inventory.md). All
// samples are taken before the results are reported, interleaved, whatever
// -bench selects.
func BenchmarkPeers(b *testing.B) {
	f, strategies := newPeerFixture(b)
	for i, s := range strategies { // connections open and warm, plans cached
		f.sample(b, s, 64, 1, i+1)
	}
	samples := map[string][]peerResult{}
	id := len(strategies)
	for round := range peerRounds {
		for _, places := range peerPlaces {
			for _, clients := range peerClients {
				for i := range strategies {
					s := strategies[(i+round)%len(strategies)]
					id++
					key := peerCase(s.name, places, clients)
					samples[key] = append(samples[key], f.sample(b, s, clients, places, id))
				}
			}
		}
	}
	for _, places := range peerPlaces {
		for _, s := range strategies {
			for _, clients := range peerClients {
				key := peerCase(s.name, places, clients)
				ours := samples[peerCase(strategies[0].name, places, clients)]
				b.Run(key, func(b *testing.B) {
					for range b.N {
						reportPeer(b, samples[key], ours)
					}
				})
			}
		}
	}
}

// reportPeer reports the medians of a strategy's samples, the spread of
// its throughput between the slowest and the fastest, and the median of
// catraca's throughput over its own in the same round (paired samples,
// taken a few seconds apart).
func reportPeer(b *testing.B, rs, ours []peerResult) {
	med := func(f func(i int, r peerResult) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(i, r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(med(func(i int, r peerResult) float64 { return ours[i].PerSec / r.PerSec }), "catraca/peer")
	perSec := med(func(_ int, r peerResult) float64 { return r.PerSec })
	byRate := func(a, b peerResult) int { return cmp.Compare(a.PerSec, b.PerSec) }
	lo, hi := slices.MinFunc(rs, byRate), slices.MaxFunc(rs, byRate)
	b.ReportMetric(perSec, "holds/s")
	b.ReportMetric((hi.PerSec-lo.PerSec)/perSec*100, "spread-%")
	b.ReportMetric(med(func(_ int, r peerResult) float64 { return float64(r.P50.Microseconds()) / 1000 }), "p50-ms")
	b.ReportMetric(med(func(_ int, r peerResult) float64 { return float64(r.P99.Microseconds()) / 1000 }), "p99-ms")
	b.ReportMetric(med(func(_ int, r peerResult) float64 { return float64(r.cpu.DB.Microseconds()) / float64(r.Ops) / 1000 }), "db-cpu-ms/op")
	b.ReportMetric(med(func(_ int, r peerResult) float64 { return float64(r.cpu.Go.Microseconds()) / float64(r.Ops) / 1000 }), "go-cpu-ms/op")
	b.ReportMetric(med(func(_ int, r peerResult) float64 { return float64(r.Errors) }), "errors")
	b.ReportMetric(med(func(_ int, r peerResult) float64 { return float64(r.retries) / float64(r.Ops) }), "retries/op")
}
