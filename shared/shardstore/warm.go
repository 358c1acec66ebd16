package shardstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Warm prepares and plans the hold path's statements on a new shard
// connection (a pgxpool AfterConnect hook), for two reasons:
//
//   - A fresh backend pays about 20 ms of CPU for its first hold (catalog
//     caches, parsing and planning the CTEs) against 2 ms after; without
//     this every connection pays it inside the on-sale burst.
//   - pgx drops a statement from its cache when a query on it fails, and a
//     taken seat or a full account is an error here: the next hold on that
//     connection would parse and plan again. Explicitly prepared statements
//     (name = SQL) are exempt, so collisions cost no planning.
//
// Each statement then runs for no event in a transaction that is rolled
// back, which builds its generic plan (plan_cache_mode on the shard); the
// errors execution may raise after planning are expected and ignored.
func Warm(ctx context.Context, conn *pgx.Conn) error {
	for _, s := range warmSteps() {
		if _, err := conn.Prepare(ctx, s.sql, s.sql); err != nil {
			if pgErr := (*pgconn.PgError)(nil); errors.As(err, &pgErr) {
				return nil // a shard not migrated yet: leave the connection cold
			}
			return fmt.Errorf("prepare hold statement: %w", err)
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		if rows, err := tx.Query(ctx, s.sql, s.args...); err == nil {
			rows.Close()
		}
		if err := tx.Rollback(ctx); err != nil {
			return err
		}
	}
	return nil
}

// warmSteps are the hold path's statements, each with arguments of the
// types the hold sends. Each warm-up inserts its holds under a key of its
// own: with one shared key, a burst of new connections' warm-ups queued on
// each other's uncommitted key (when some hold shapes inserted the hold
// before taking the account's lock and some after, they deadlocked until
// deadlock_timeout: TestConcurrentWarmUpsDoNotDeadlock).
func warmSteps() []step {
	h := NewHold{Currency: "XXX", TTL: 1, MaxPerAccount: 1, Key: "warm-up-" + strconv.FormatUint(rand.Uint64(), 36), Hash: []byte{}}
	none := []int64{0}
	seats, places := TakenSeats(h.EventID, none), TakenPlaces(Pool{}, []int{0})
	return []step{
		{insertHold, []any{h.EventID, h.Account, h.TTL, h.Key, h.Hash, LimitLockKey(h.Account, h.EventID)}},
		takeSeats(h, none),
		takeGAFast(h, Pool{Slots: 2}, 1),
		takeGAFast(h, Pool{Slots: 1}, 1),
		{seats.order, takeArgs(h, seats.args, seats.want, int64(0))},
		{places.order, takeArgs(h, places.args, places.want, int64(0))},
		{bestCandidates, []any{h.EventID, "", BestWindow, 0}},
		{bestClaim, []any{none, int64(0), time.Time{}, 1}},
		{seatStates, []any{h.EventID, none}},
		{slotWithEnough, []any{int64(0), 1}},
		{lockSlots, []any{int64(0)}},
		{takeFromSlot, []any{int64(0), 0, 1}},
		{expiredOfEvent, []any{h.EventID}},
	}
}
