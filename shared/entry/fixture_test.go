package entry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// world is an app with an organizer, door staff, a fan and two events on
// shard 1, with entry's clock under the test's control.
type world struct {
	app             *app.App
	svc             *entry.Service
	now             time.Time
	org, staff, fan int64
	event, other    int64
	venue           int64
	pool            *pgxpool.Pool
	seats           []int64 // event_seats ids of the first event, unsold
	ctx             context.Context
	orderSeq        int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{app: apptest.New(t, 2), ctx: ctx, now: time.Now().UTC()}
	w.svc = w.app.Entry
	w.svc.Now = func() time.Time { return w.now }
	w.org = w.account(t, "org@example.com", "Olga Organizer")
	require.NoError(t, pgstore.New(w.app.Catalog).SetRole(ctx, w.org, "organizer"))
	w.staff = w.account(t, "door@example.com", "Dora Door")
	w.fan = w.account(t, "fan@example.com", "Fabio Fan")
	l, err := w.app.Organizer.ImportLayoutAs(ctx, w.org, 0, venue.Stadium("Entry Arena", "Recife", 200, 50))
	require.NoError(t, err)
	w.venue = l.VenueID
	w.event = w.makeEvent(t, l.VenueID, "Entry Show")
	w.other = w.makeEvent(t, l.VenueID, "Other Show")
	w.pool, err = w.app.Shards.Pool(1)
	require.NoError(t, err)
	rows, err := w.pool.Query(ctx, `SELECT id FROM event_seats WHERE event_id = $1 ORDER BY id`, w.event)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		w.seats = append(w.seats, id)
	}
	require.NoError(t, rows.Err())
	_, _, err = w.svc.Grant(ctx, w.event, w.org, "door@example.com")
	require.NoError(t, err)
	return w
}

func (w *world) account(t *testing.T, email, name string) int64 {
	a, err := w.app.Accounts.SignUp(w.ctx, email, "a long enough password", name)
	require.NoError(t, err)
	return a.ID
}

func (w *world) makeEvent(t *testing.T, venueID int64, name string) int64 {
	now := time.Now().UTC()
	e, err := w.app.Organizer.CreateEvent(w.ctx, w.org, organizer.EventSpec{VenueID: venueID, LayoutVersion: 1, Name: name,
		StartsAt: now.Add(72 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(71 * time.Hour), Shard: 1,
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 9000}, {Code: "B", PriceCents: 7000}, {Code: "C", PriceCents: 5000}, {Code: "GA", PriceCents: 3000}}})
	require.NoError(t, err)
	return e.ID
}

// sell writes a paid order of n seats of event for buyer, as a settled
// checkout leaves it, and returns its ticket ids.
func (w *world) sell(t *testing.T, event, buyer int64, n int) []int64 {
	t.Helper()
	w.orderSeq++
	key := fmt.Sprintf("fixture-%d", w.orderSeq)
	var hold, order int64
	require.NoError(t, w.pool.QueryRow(w.ctx, `INSERT INTO holds (event_id, account_id, status, expires_at, idempotency_key, request_hash)
		VALUES ($1, $2, 'converted', now(), $3, '\x00') RETURNING id`, event, buyer, key).Scan(&hold))
	require.NoError(t, w.pool.QueryRow(w.ctx, `INSERT INTO orders (event_id, user_id, hold_id, status, ticket_count, total_cents, currency, paid_at)
		VALUES ($1, $2, $3, 'paid', $4, 0, 'BRL', now()) RETURNING id`, event, buyer, hold, n).Scan(&order))
	var ids []int64
	for i := 0; i < n; i++ {
		var seat int64
		require.NoError(t, w.pool.QueryRow(w.ctx, `UPDATE event_seats SET status = 'sold', order_id = $2
			WHERE id = (SELECT id FROM event_seats WHERE event_id = $1 AND status = 'available' ORDER BY id LIMIT 1) RETURNING id`,
			event, order).Scan(&seat))
		var item, ticket int64
		require.NoError(t, w.pool.QueryRow(w.ctx, `INSERT INTO order_items (order_id, event_seat_id, quantity, label, price_level, price_cents)
			SELECT $1, id, 1, section_code || ' row ' || row_label || ' seat ' || seat_number, price_level, 0 FROM event_seats WHERE id = $2
			RETURNING id`, order, seat).Scan(&item))
		require.NoError(t, w.pool.QueryRow(w.ctx, `INSERT INTO tickets (order_id, event_id, order_item_id, code) VALUES ($1, $2, $3, $4) RETURNING id`,
			order, event, item, fmt.Sprintf("%s-%d", key, i)).Scan(&ticket))
		ids = append(ids, ticket)
	}
	return ids
}

// codeOf returns the rotating code the holder's ticket page shows now.
func (w *world) codeOf(t *testing.T, holder, ticket int64) string {
	t.Helper()
	tk, err := w.svc.Ticket(w.ctx, holder, ticket)
	require.NoError(t, err, "account %d holds ticket %d", holder, ticket)
	require.NotEmpty(t, tk.Codes, "ticket %d is %s", ticket, tk.Status)
	return tk.Codes[0].Code
}

// door is the staff's door at event.
func (w *world) door(t *testing.T, event int64) entry.Door {
	t.Helper()
	d, err := w.svc.Staff(w.ctx, event, w.staff)
	require.NoError(t, err)
	return d
}

func (w *world) scan(t *testing.T, event int64, gate, scanID, code string) entry.Result {
	t.Helper()
	r, err := w.svc.Check(w.ctx, w.door(t, event), entry.Scan{Gate: gate, ID: scanID, Code: code})
	require.NoError(t, err)
	return r
}
