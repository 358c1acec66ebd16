package organizer_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

func spec(l venue.Layout, name string) organizer.EventSpec {
	now := time.Now().UTC()
	return organizer.EventSpec{
		VenueID: l.VenueID, LayoutVersion: l.Version, Name: name,
		StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(47 * time.Hour),
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 300}, {Code: "B", PriceCents: 200}, {Code: "C", PriceCents: 100}, {Code: "GA", PriceCents: 50}},
	}
}

func TestEventsLiveOnTheirOwnShard(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 2)
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Test Arena", "Recife", 300, 40))
	require.NoError(t, err)

	first, err := org.CreateEvent(ctx, 0, spec(l, "First"))
	require.NoError(t, err)
	second, err := org.CreateEvent(ctx, 0, spec(l, "Second"))
	require.NoError(t, err)
	require.Equal(t, 1, first.Shard)
	require.Equal(t, 2, second.Shard, "placement sends the next event to the less loaded shard")

	for _, e := range []event.Event{first, second} {
		for _, id := range a.Shards.IDs() {
			pool, err := a.Shards.Pool(id)
			require.NoError(t, err)
			var seats, ga int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM event_seats WHERE event_id = $1`, e.ID).Scan(&seats))
			require.NoError(t, pool.QueryRow(ctx, `SELECT coalesce(sum(remaining), 0) FROM ga_slots s JOIN ga_pools p ON p.id = s.pool_id WHERE p.event_id = $1`, e.ID).Scan(&ga))
			if id == e.Shard {
				require.Equal(t, l.SeatCount(), seats, "every layout seat is sellable on the owning shard")
				require.Equal(t, 40, ga, "GA capacity spread over slots sums to the pool capacity")
			} else {
				require.Zero(t, seats, "no inventory on the other shard")
				require.Zero(t, ga)
			}
		}
		pool, err := a.Shards.ForEvent(ctx, e.ID)
		require.NoError(t, err)
		want, _ := a.Shards.Pool(e.Shard)
		require.Same(t, want, pool)
	}

	var price int
	pool, _ := a.Shards.Pool(first.Shard)
	require.NoError(t, pool.QueryRow(ctx, `SELECT price_cents FROM event_seats WHERE event_id = $1 AND price_level = 'C' LIMIT 1`, first.ID).Scan(&price))
	require.Equal(t, 100, price, "prices are copied from the event's price levels")
}

func TestCreateEventRejectsBadSpecs(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Test Arena", "Recife", 100, 10))
	require.NoError(t, err)

	missingPrice := spec(l, "No GA price")
	missingPrice.PriceLevels = missingPrice.PriceLevels[:3]
	_, err = org.CreateEvent(ctx, 0, missingPrice)
	require.ErrorIs(t, err, organizer.ErrInvalidEvent)

	backwards := spec(l, "Backwards")
	backwards.SaleEndsAt = backwards.SaleStartsAt.Add(-time.Minute)
	_, err = org.CreateEvent(ctx, 0, backwards)
	require.ErrorIs(t, err, organizer.ErrInvalidEvent)

	// A price level's code and name go onto the event page, the seat
	// map's legend and the attendee export: one line each, like the
	// layout's levels, and only levels the layout has.
	for _, level := range []event.PriceLevel{
		{Code: "A", Name: "Front\nrow", PriceCents: 300},
		{Code: "A", Name: "Front \u202erow", PriceCents: 300},
		{Code: "A", Name: "Front\x1b[31m", PriceCents: 300},
	} {
		bad := spec(l, "Bad level name")
		bad.PriceLevels[0] = level
		_, err = org.CreateEvent(ctx, 0, bad)
		require.ErrorIs(t, err, organizer.ErrInvalidEvent, "%q", level.Name)
	}
	stray := spec(l, "Stray level")
	stray.PriceLevels = append(stray.PriceLevels, event.PriceLevel{Code: "VIP\n", PriceCents: 1})
	_, err = org.CreateEvent(ctx, 0, stray)
	require.ErrorIs(t, err, organizer.ErrInvalidEvent)
	stray.PriceLevels[len(stray.PriceLevels)-1].Code = "VIP"
	_, err = org.CreateEvent(ctx, 0, stray)
	require.ErrorIs(t, err, organizer.ErrInvalidEvent, "a level the layout does not have would be listed at a price nothing is sold at")

	var n int
	require.NoError(t, a.Catalog.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
	require.Zero(t, n, "rejected specs write nothing")
}

// TestPricesSurviveACrashBetweenTheDatabases: a price change writes the
// catalog, then the shard; when the shard step fails (as after a crash
// between the two), the next price change, of any level, brings every
// level of the shard back in line with the catalog.
func TestPricesSurviveACrashBetweenTheDatabases(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	var owner int64
	require.NoError(t, a.Catalog.QueryRow(ctx, `INSERT INTO accounts (email, password_hash, name, role)
		VALUES ('org@example.com', 'x', 'Org', 'organizer') RETURNING id`).Scan(&owner))
	l, err := org.ImportLayoutAs(ctx, owner, 0, venue.Stadium("Test Arena", "Recife", 100, 10))
	require.NoError(t, err)
	e, err := org.CreateEvent(ctx, owner, spec(l, "Priced"))
	require.NoError(t, err)
	shardDB, err := a.Shards.Pool(e.Shard)
	require.NoError(t, err)
	prices := func(level string) (catalog, seats, pools int) {
		t.Helper()
		require.NoError(t, a.Catalog.QueryRow(ctx, `SELECT price_cents FROM event_price_levels WHERE event_id = $1 AND code = $2`, e.ID, level).Scan(&catalog))
		require.NoError(t, shardDB.QueryRow(ctx, `SELECT coalesce(max(price_cents), -1) FROM event_seats WHERE event_id = $1 AND price_level = $2`, e.ID, level).Scan(&seats))
		require.NoError(t, shardDB.QueryRow(ctx, `SELECT coalesce(max(price_cents), -1) FROM ga_pools WHERE event_id = $1 AND price_level = $2`, e.ID, level).Scan(&pools))
		return catalog, seats, pools
	}

	// The shard refuses writes to its inventory: the "crash" after the
	// catalog committed.
	_, err = shardDB.Exec(ctx, `
		CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'shard down'; END $$;
		CREATE TRIGGER down BEFORE UPDATE ON event_seats FOR EACH STATEMENT EXECUTE FUNCTION refuse();`)
	require.NoError(t, err)
	_, err = org.SetPriceLevels(ctx, owner, e.ID, nil, []event.PriceLevel{{Code: "A", PriceCents: 350}})
	require.Error(t, err, "the shard step failed")
	catalog, seats, _ := prices("A")
	require.Equal(t, 350, catalog, "the catalog, written first, has the new price")
	require.Equal(t, 300, seats, "the shard kept the old one, whole: its side is one transaction")

	_, err = shardDB.Exec(ctx, `DROP TRIGGER down ON event_seats`)
	require.NoError(t, err)
	_, err = org.SetPriceLevels(ctx, owner, e.ID, nil, []event.PriceLevel{{Code: "GA", PriceCents: 70}})
	require.NoError(t, err)
	catalog, seats, _ = prices("A")
	require.Equal(t, catalog, seats, "the next change, of another level, repaired level A")
	catalog, _, pools := prices("GA")
	require.Equal(t, 70, catalog)
	require.Equal(t, 70, pools)
}

// TestWritesNeedOneConnectionEach: an organizer write reads the event in
// the transaction that locks it, so writes never wait for a second
// connection while holding one. More concurrent writes than the pool has
// connections all finish; reading through the pool instead starves it
// (each write holds a connection and waits for another) until the deadline.
func TestWritesNeedOneConnectionEach(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	ctx := context.Background()
	var owner int64
	require.NoError(t, a.Catalog.QueryRow(ctx, `INSERT INTO accounts (email, password_hash, name, role)
		VALUES ('org@example.com', 'x', 'Org', 'organizer') RETURNING id`).Scan(&owner))
	setup := organizer.New(a.Catalog, a.Shards)
	l, err := setup.ImportLayoutAs(ctx, owner, 0, venue.Stadium("Test Arena", "Recife", 100, 10))
	require.NoError(t, err)
	e, err := setup.CreateEvent(ctx, owner, spec(l, "Busy"))
	require.NoError(t, err)

	pc, err := pgxpool.ParseConfig(a.Catalog.Config().ConnString())
	require.NoError(t, err)
	pc.MaxConns = 2
	small, err := pgxpool.NewWithConfig(ctx, pc)
	require.NoError(t, err)
	t.Cleanup(small.Close)
	org := organizer.New(small, a.Shards)

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	const writers = 6
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			var err error
			if i%2 == 0 {
				_, err = org.SetWaitingRoom(ctx, owner, e.ID, nil, event.WaitingRoom{Enabled: true, Ceiling: 100 + i})
			} else {
				_, err = org.ChangeStatus(ctx, owner, e.ID, nil, string(event.OnSale))
			}
			errs <- err
		}()
	}
	for range writers {
		require.NoError(t, <-errs, "every write finishes with a pool of %d connections", pc.MaxConns)
	}
}
