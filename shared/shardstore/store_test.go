package shardstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/tools/testenv"
)

// calls counts the statements and batches a pool sends.
type calls struct{ queries, batches atomic.Int64 }

func (c *calls) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.queries.Add(1)
	return ctx
}
func (c *calls) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *calls) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.batches.Add(1)
	return ctx
}
func (c *calls) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *calls) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// newStore returns a store on a fresh migrated shard holding event 1 with
// seats 1..n (price level A, 100 each) and a GA pool "GA" of capacity
// places over slots, and the counter of what the store sends.
func newStore(t *testing.T, seats, capacity, slots int) (*shardstore.Store, *calls) {
	t.Helper()
	ctx := context.Background()
	dbs := testenv.NewDatabases(t, 1)
	cfg, err := pgxpool.ParseConfig(dbs.DSN(dbs.Shards[1]))
	require.NoError(t, err)
	c := &calls{}
	cfg.ConnConfig.Tracer = c
	cfg.MaxConns = 1 // one connection: its statement cache is warm after the first hold
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	st := shardstore.New(pool)
	var rows []shardstore.NewSeat
	for i := range seats {
		rows = append(rows, shardstore.NewSeat{SeatID: int64(i + 1), Index: i, Section: "S", Row: "1", Number: i + 1, PriceLevel: "A", PriceCents: 100})
	}
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
		if err := tx.CreateSeats(ctx, 1, rows); err != nil {
			return err
		}
		return tx.CreatePool(ctx, 1, shardstore.NewPool{Code: "GA", Name: "Floor", PriceLevel: "A", PriceCents: 50, Capacity: capacity, Slots: slots})
	}))
	return st, c
}

// hold is a hold request of account for event 1.
func hold(account int64, key string) shardstore.NewHold {
	return shardstore.NewHold{EventID: 1, Account: account, TTL: 60, Key: key, Hash: []byte(key), Currency: "BRL", MaxPerAccount: 10}
}

// TestHoldsAreOneStatement: a seat hold and a GA hold (a slot has enough)
// each send the database one statement and nothing else, once the
// connection's statement cache is warm.
func TestHoldsAreOneStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, c := newStore(t, 10, 100, 4)
	pool, found, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	require.True(t, found)
	_, err = st.TakeSeats(ctx, hold(1, "warm"), []int64{1})
	require.NoError(t, err)
	_, err = st.TakeGA(ctx, hold(1, "warm-ga"), pool, 1)
	require.NoError(t, err)

	c.queries.Store(0)
	c.batches.Store(0)
	h, err := st.TakeSeats(ctx, hold(2, "seats"), []int64{2, 3})
	require.NoError(t, err)
	require.Len(t, h.Items, 2)
	require.EqualValues(t, 200, h.TotalCents)
	require.EqualValues(t, 1, c.queries.Load(), "a seat hold is one statement")
	require.Zero(t, c.batches.Load(), "and no batch")

	c.queries.Store(0)
	h, err = st.TakeGA(ctx, hold(3, "ga"), pool, 2)
	require.NoError(t, err)
	require.EqualValues(t, 100, h.TotalCents)
	require.EqualValues(t, 1, c.queries.Load(), "a GA hold is one statement")
	require.Zero(t, c.batches.Load(), "and no batch")
}

// TestGAFastTakeFindsTheLastSlot: the one-round-trip GA take starts at a
// random slot, looks above it and then below it, so it finds a slot with
// places wherever it lies; every place of a pool spread one per slot sells
// on the fast path, and the next take finds none.
func TestGAFastTakeFindsTheLastSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const slots = 16
	st, _ := newStore(t, 1, slots, slots)
	pool, found, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	require.True(t, found)
	for i := range slots {
		_, err := st.TakeGA(ctx, hold(int64(100+i), "ga"), pool, 1)
		require.NoError(t, err, "take %d of %d", i+1, slots)
	}
	_, err = st.TakeGA(ctx, hold(200, "ga"), pool, 1)
	require.ErrorIs(t, err, shardstore.ErrNoSlot)
}

// TestGAPlacesGoBackToTheirSlots: a take split over slots records on its
// order item the slot of every place, and ending the hold gives each slot
// back exactly what it gave (a pool of one place per slot has no slot with
// two afterwards); a payment for the ended hold takes them again.
func TestGAPlacesGoBackToTheirSlots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := newStore(t, 1, 4, 4)
	pool, _, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	gaLeft := func() int {
		available, _, err := st.Availability(ctx, 1)
		require.NoError(t, err)
		return available - 1 // the seat
	}
	split := func(account int64) shardstore.Held {
		_, err := st.TakeGA(ctx, hold(account, "fast"), pool, 3)
		require.ErrorIs(t, err, shardstore.ErrNoSlot, "no slot has 3 places")
		h, err := st.TakeWith(ctx, hold(account, "split"), func(tx shardstore.Tx, _ int64, _ time.Time) (shardstore.Taken, error) {
			slots, err := tx.TakePlaces(ctx, pool.ID, 3)
			require.Equal(t, []int{0, 1, 2}, slots)
			return shardstore.TakenPlaces(pool, slots), err
		})
		require.NoError(t, err)
		require.Equal(t, 1, gaLeft())
		return h
	}
	end := func(h shardstore.Held) {
		require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
			freed, err := tx.EndHolds(ctx, []int64{h.ID}, shardstore.HoldReleased)
			require.Equal(t, []shardstore.Freed{{EventID: 1, Seats: nil, GA: map[string]int{"GA": 3}}}, freed)
			return err
		}))
		require.Equal(t, 4, gaLeft())
	}

	end(split(1))
	_, err = st.TakeGA(ctx, hold(2, "pair"), pool, 2)
	require.ErrorIs(t, err, shardstore.ErrNoSlot, "every slot got its one place back")

	h := split(3)
	end(h)
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
		ok, _, err := tx.SellHold(ctx, h.ID, h.OrderID)
		require.True(t, ok, "the places are free: the payment takes them again")
		return err
	}))
	require.Equal(t, 1, gaLeft())
}

// TestLimitCountsWhatCommittedWhileTheHoldWaited: a hold is one statement,
// whose snapshot is taken before it waits for the account's limit lock; the
// limit check must still count the tickets another transaction of the same
// account committed while holding that lock, or two holds racing could
// both pass it.
func TestLimitCountsWhatCommittedWhileTheHoldWaited(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, st := oneSeat(t)
	h := hold(1, "late")
	h.MaxPerAccount = 2

	first, err := pool.Begin(ctx) // another hold of the account, still open
	require.NoError(t, err)
	defer first.Rollback(ctx)
	_, err = first.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, shardstore.LimitLockKey(h.Account, h.EventID))
	require.NoError(t, err)
	_, err = first.Exec(ctx, `WITH h AS (
			INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
			VALUES (1, $1, now() + interval '1 minute', 'first', '\x00') RETURNING id)
		INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency) SELECT 1, $1, id, 2, 200, 'BRL' FROM h`, h.Account)
	require.NoError(t, err)

	late := make(chan error, 1)
	go func() {
		_, err := st.TakeSeats(ctx, h, []int64{1})
		late <- err
	}()
	require.Eventually(t, func() bool { // the late hold has its snapshot and waits for the lock
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))`).Scan(&waiting)
		return err == nil && waiting
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, first.Commit(ctx))
	require.ErrorIs(t, <-late, shardstore.ErrOverLimit, "the first hold's two tickets count")
}

// TestReusedKeyIsReportedBeforeTheLimit: retrying a hold that brought the
// account to its limit fails as a used key (the caller replays the first
// hold), not as over the limit, which would refuse the fan their own hold.
func TestReusedKeyIsReportedBeforeTheLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := newStore(t, 4, 10, 1)
	h := hold(1, "k")
	h.MaxPerAccount = 2
	_, err := st.TakeSeats(ctx, h, []int64{1, 2})
	require.NoError(t, err)
	_, err = st.TakeSeats(ctx, h, []int64{1, 2})
	require.ErrorIs(t, err, shardstore.ErrKeyUsed)
	_, err = st.TakeSeats(ctx, h, []int64{3, 4})
	require.ErrorIs(t, err, shardstore.ErrKeyUsed)
	h.Key = "other"
	_, err = st.TakeSeats(ctx, h, []int64{3})
	require.ErrorIs(t, err, shardstore.ErrOverLimit)
}

// TestStepByStepTakeLocksTheAccountFirst: a take done step by step holds
// the account's limit lock before it takes any seat, as a one-statement
// hold does, so that the two, for one account, never each wait for the
// other.
func TestStepByStepTakeLocksTheAccountFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, st := oneSeat(t)
	h := hold(1, "step")
	_, err := st.TakeWith(ctx, h, func(tx shardstore.Tx, holdID int64, until time.Time) (shardstore.Taken, error) {
		var free bool
		err := pool.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, shardstore.LimitLockKey(h.Account, h.EventID)).Scan(&free)
		if err != nil || free {
			return shardstore.Taken{}, fmt.Errorf("the account's lock is not held before the take (free: %v, %v)", free, err)
		}
		free, err = tx.ClaimSeats(ctx, []int64{1}, holdID, until)
		if err != nil || !free {
			return shardstore.Taken{}, fmt.Errorf("claim: %v, %v", free, err)
		}
		return shardstore.TakenSeats(h.EventID, []int64{1}), nil
	})
	require.NoError(t, err)
}

// TestStoppedSalesRefuseHoldsOfOlderVersions: a sale stopped at a version
// (closed, cancelled, or its end moved to the past) refuses the holds
// (every shape) decided on an older version of the event, and only those;
// copies of status changes applied out of order keep the newest.
func TestStoppedSalesRefuseHoldsOfOlderVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, _ := newStore(t, 10, 100, 4)
	pool, _, err := st.PoolOf(ctx, 1, "GA")
	require.NoError(t, err)
	at := func(version int64, key string) shardstore.NewHold {
		h := hold(int64(len(key)), key)
		h.Version = version
		return h
	}
	later := time.Now().Add(time.Hour)
	copyStatus := func(status string, ends time.Time, version int64) {
		t.Helper()
		require.NoError(t, st.CopyStatus(ctx, shardstore.StatusCopy{EventID: 1, Shard: 1, Status: status, SaleEndsAt: ends, Version: version}))
	}
	copyStatus("closed", later, 5)
	_, err = st.TakeSeats(ctx, at(4, "seats"), []int64{1})
	require.ErrorIs(t, err, shardstore.ErrSaleStopped)
	_, err = st.TakeGA(ctx, at(4, "fast"), pool, 1)
	require.ErrorIs(t, err, shardstore.ErrSaleStopped)
	_, err = st.TakeWith(ctx, at(4, "step"), func(tx shardstore.Tx, _ int64, _ time.Time) (shardstore.Taken, error) {
		slots, err := tx.TakePlaces(ctx, pool.ID, 1)
		return shardstore.TakenPlaces(pool, slots), err
	})
	require.ErrorIs(t, err, shardstore.ErrSaleStopped)
	_, err = st.TakeSeats(ctx, at(5, "seen"), []int64{1})
	require.NoError(t, err, "a hold that read the event as of the stop or later is the cache's to refuse")

	copyStatus("on_sale", later, 7)
	copyStatus("cancelled", later, 6) // a late copy of an older change
	_, err = st.TakeSeats(ctx, at(4, "reopened"), []int64{2})
	require.NoError(t, err, "the sale reopened at 7 stays open")

	copyStatus("on_sale", time.Now().Add(-time.Second), 8)
	_, err = st.TakeSeats(ctx, at(7, "ended seats"), []int64{3})
	require.ErrorIs(t, err, shardstore.ErrSaleStopped, "the sale's end moved to the past")
	_, err = st.TakeGA(ctx, at(7, "ended fast"), pool, 1)
	require.ErrorIs(t, err, shardstore.ErrSaleStopped)
	_, err = st.TakeSeats(ctx, at(8, "ended seen"), []int64{3})
	require.NoError(t, err, "read as of the end's move: the cache's to refuse")
	copyStatus("on_sale", later, 9)
	_, err = st.TakeSeats(ctx, at(7, "extended"), []int64{4})
	require.NoError(t, err, "the end moved back out")
}
