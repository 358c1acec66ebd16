package shardstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
)

// TestPriceChangesAndSeatHoldsDoNotDeadlock: a price change writes every
// seat of its level, held ones included, so it meets holds of several seats
// on the same rows. Both lock seats in id order: holds of a low and a high
// seat run while the level's price keeps changing, with the low seats'
// rows moved behind the high ones in the table (where a plain UPDATE scans
// them last), and none deadlocks; the seats end at the last price.
func TestPriceChangesAndSeatHoldsDoNotDeadlock(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, st := freshShard(t)
	const half = 50
	var seats []shardstore.NewSeat
	for i := range 2 * half {
		seats = append(seats, shardstore.NewSeat{SeatID: int64(i + 1), Index: i, Section: "S", Row: "1", Number: i + 1, PriceLevel: "A", PriceCents: 100})
	}
	require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error { return tx.CreateSeats(ctx, 1, seats) }))
	_, err := pool.Exec(ctx, `UPDATE event_seats SET updated_at = now() WHERE seat_id <= $1`, half)
	require.NoError(t, err)

	const holders, changers, rounds = 4, 2, 60
	var wg sync.WaitGroup
	errs := make(chan error, (holders+changers)*rounds)
	for h := range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				low := int64(1 + (h*rounds+r)%half)
				req := hold(int64(h+1), fmt.Sprintf("h%d-%d", h, r))
				req.TTL = 0 // ends at once: the seats are free for the next round
				if _, err := st.TakeSeats(ctx, req, []int64{low, low + half}); err != nil && !errors.Is(err, shardstore.ErrSeatsTaken) {
					errs <- err
				}
			}
		}()
	}
	for c := range changers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				if err := st.WithTx(ctx, func(tx shardstore.Tx) error { return tx.SetPrice(ctx, 1, "A", 200+c*rounds+r) }); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var pgErr *pgconn.PgError
		require.False(t, errors.As(err, &pgErr) && pgErr.Code == "40P01", "deadlock: %v", err)
		require.NoError(t, err)
	}
	last := 0
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT price_cents) FROM event_seats WHERE event_id = 1`).Scan(&last))
	require.Equal(t, 1, last, "every seat, held or not, has the level's last price")
}
