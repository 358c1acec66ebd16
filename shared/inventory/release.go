package inventory

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/shardstore"
)

// Release frees a hold at once and cancels its pending order. Releasing a
// hold that already ended is a no-op; a paid hold cannot be released.
func (s *Service) Release(ctx context.Context, holdID, account int64) (Hold, error) {
	st, err := s.shards.OfRow(holdID)
	if err != nil {
		return Hold{}, ErrHoldNotFound
	}
	var h Hold
	released := false
	err = st.WithTx(ctx, func(tx shardstore.Tx) error {
		owner, status, found, err := tx.LockHold(ctx, holdID)
		if err != nil {
			return err
		}
		if !found || owner != account {
			return ErrHoldNotFound
		}
		switch status {
		case shardstore.HoldConverted:
			return ErrHoldNotReleasable
		case shardstore.HoldActive:
			if _, err := tx.EndHolds(ctx, []int64{holdID}, shardstore.HoldReleased); err != nil {
				return err
			}
			released = true
		}
		h, err = load(ctx, tx, holdID)
		return err
	})
	if err != nil {
		return Hold{}, fmt.Errorf("release hold %d: %w", holdID, err)
	}
	h.Released = released
	return h, nil
}

// Freed is what ending holds gave back to one event, for watchers.
type Freed struct {
	EventID int64
	Seats   []int          // layout seat indexes now available
	GA      map[string]int // pool code → places returned
}

// SweepExpired releases expired holds of one shard in batches, walking the
// partial index on active holds' expiry. Two sweepers at once are safe: each
// batch skips the holds another has locked.
func SweepExpired(ctx context.Context, pool *pgxpool.Pool, batch int) (int, error) {
	return sweep(ctx, shardstore.New(pool), batch, nil)
}

// sweep is SweepExpired that tells freed about each batch after commit.
func sweep(ctx context.Context, st *shardstore.Store, batch int, freed func(Freed)) (int, error) {
	total := 0
	for {
		var back []shardstore.Freed
		var n int
		err := st.WithTx(ctx, func(tx shardstore.Tx) (err error) {
			n, back, err = tx.ExpireBatch(ctx, batch)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("sweep expired holds: %w", err)
		}
		if freed != nil {
			for _, f := range back {
				freed(Freed(f))
			}
		}
		total += n
		if n < batch {
			return total, nil
		}
	}
}

// SweepAll sweeps every shard; it reports how many holds each released.
func (s *Service) SweepAll(ctx context.Context, batch int) (map[int]int, error) {
	out := map[int]int{}
	var errs []error
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err == nil {
			out[id], err = sweep(ctx, st, batch, s.freed)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %d: %w", id, err))
		}
	}
	return out, errors.Join(errs...)
}

// Availability counts what an event can still sell now (free seats and GA
// places, counting expired holds as free) and what active holds may still
// give back.
func (s *Service) Availability(ctx context.Context, e event.Event) (available, held int, err error) {
	st, err := s.shards.Reader(e.Shard)
	if err != nil {
		return 0, 0, err
	}
	if available, held, err = st.Availability(ctx, e.ID); err != nil {
		return 0, 0, fmt.Errorf("availability of event %d: %w", e.ID, err)
	}
	return available, held, nil
}
