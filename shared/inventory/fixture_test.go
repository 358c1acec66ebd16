package inventory_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// fixture is one on-sale event on a one-shard deployment.
type fixture struct {
	app   *app.App
	event event.Event
	shard *pgxpool.Pool
	seats []int64 // layout seat ids, best first
}

type eventOption func(*organizer.EventSpec)

func newFixture(t testing.TB, minSeats, gaCapacity int, opts ...eventOption) *fixture {
	t.Helper()
	a := apptest.New(t, 1)
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Fixture Arena", "Recife", minSeats, gaCapacity))
	require.NoError(t, err)
	now := time.Now().UTC()
	spec := organizer.EventSpec{
		VenueID: l.VenueID, LayoutVersion: l.Version, Name: "Fixture Show",
		StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(47 * time.Hour),
		MaxPerAccount: 8, MaxPerHold: 4, HoldTTL: 300,
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 300}, {Code: "B", PriceCents: 200}, {Code: "C", PriceCents: 100}, {Code: "GA", PriceCents: 50}},
	}
	for _, o := range opts {
		o(&spec)
	}
	e, err := org.CreateEvent(ctx, 0, spec)
	require.NoError(t, err)
	require.NoError(t, org.SetStatus(ctx, e.ID, "on_sale"))
	e.Status = "on_sale"
	pool, err := a.Shards.Pool(e.Shard)
	require.NoError(t, err)
	f := &fixture{app: a, event: e, shard: pool}
	rows, err := pool.Query(ctx, `SELECT seat_id FROM event_seats WHERE event_id = $1 ORDER BY section_rank, row_rank, section_code, row_label, seat_number`, e.ID)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		f.seats = append(f.seats, id)
	}
	return f
}

func (f *fixture) count(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.shard.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

// expire moves every active hold's expiry into the past, as time would.
func (f *fixture) expireAll(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	_, err := f.shard.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second' WHERE status = 'active'`)
	require.NoError(t, err)
	_, err = f.shard.Exec(ctx, `UPDATE event_seats SET held_until = now() - interval '1 second' WHERE status = 'held'`)
	require.NoError(t, err)
}
