package organizer_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// onSale is an organizer's event on sale on shard 1 of a, with the pool
// of that shard and a hold of one seat as of a version of the event.
type onSale struct {
	a      *app.App
	owner  int64
	e      event.Event
	shard  *pgxpool.Pool
	seats  []int64
	ctx    context.Context
	holdAt func(t *testing.T, version int64, key string) error
}

func newOnSale(t *testing.T) *onSale {
	t.Helper()
	ctx := context.Background()
	s := &onSale{a: apptest.New(t, 1), ctx: ctx}
	require.NoError(t, s.a.Catalog.QueryRow(ctx, `INSERT INTO accounts (email, password_hash, name, role)
		VALUES ('org@example.com', 'x', 'Org', 'organizer') RETURNING id`).Scan(&s.owner))
	l, err := s.a.Organizer.ImportLayoutAs(ctx, s.owner, 0, venue.Stadium("Test Arena", "Recife", 100, 10))
	require.NoError(t, err)
	s.e, err = s.a.Organizer.CreateEvent(ctx, s.owner, spec(l, "Stopped"))
	require.NoError(t, err)
	s.shard, err = s.a.Shards.Pool(s.e.Shard)
	require.NoError(t, err)
	rows, err := s.shard.Query(ctx, `SELECT id FROM event_seats WHERE event_id = $1 ORDER BY id LIMIT 10`, s.e.ID)
	require.NoError(t, err)
	for rows.Next() {
		var id int64
		require.NoError(t, rows.Scan(&id))
		s.seats = append(s.seats, id)
	}
	require.NoError(t, rows.Err())
	st := shardstore.New(s.shard)
	n := 0
	s.holdAt = func(t *testing.T, version int64, key string) error {
		n++
		_, err := st.TakeSeats(ctx, shardstore.NewHold{EventID: s.e.ID, Account: int64(n), TTL: 60, Key: key, Hash: []byte(key),
			Currency: "BRL", MaxPerAccount: 6, Version: version}, []int64{s.seats[n]})
		return err
	}
	return s
}

// TestStatusCopyIsRetriedUntilItLands: the shard refuses the copy of a
// close (a trigger that raises, as a shard that is down). The organizer is
// told the sale is closed, which it is in the catalog; holds that read the
// sale open still go through, until the outbox worker, retrying, lands the
// copy; from then on they are refused. A copy that fails every try is
// counted for operators, and lands once they redrive it.
func TestStatusCopyIsRetriedUntilItLands(t *testing.T) {
	t.Parallel()
	s := newOnSale(t)
	ctx := s.ctx
	var undo func()
	refuse := func(on bool) {
		t.Helper()
		if on {
			undo = apptest.RefuseWrites(t, s.shard, "event_status")
		} else {
			undo()
		}
	}
	pending := func() (attempts int, dead bool) {
		t.Helper()
		require.NoError(t, s.a.Catalog.QueryRow(ctx, `SELECT attempts, dead_at IS NOT NULL FROM outbox
			WHERE topic = 'event.status' AND processed_at IS NULL`).Scan(&attempts, &dead))
		return attempts, dead
	}
	due := func() {
		t.Helper()
		_, err := s.a.Catalog.Exec(ctx, `UPDATE outbox SET retry_at = now()`)
		require.NoError(t, err)
	}
	worker := order.New(order.Config{Shards: s.a.Shards, Catalog: s.a.Catalog, OutboxTries: 3, Log: slog.New(slog.DiscardHandler)})

	refuse(true)
	closed, err := s.a.Organizer.ChangeStatus(ctx, s.owner, s.e.ID, nil, string(event.Closed))
	require.NoError(t, err, "the catalog committed the close: that is the answer")
	require.Equal(t, event.Closed, closed.Status)
	require.NoError(t, s.holdAt(t, s.e.Version, "before the copy"), "the copy has not landed: the cache's window")

	_, err = worker.Fulfil(ctx)
	require.ErrorContains(t, err, "shard down")
	attempts, _ := pending()
	require.Equal(t, 1, attempts, "tried again later, backing off")
	refuse(false)
	due()
	n, err := worker.Fulfil(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.ErrorIs(t, s.holdAt(t, s.e.Version, "after the copy"), shardstore.ErrSaleStopped)
	require.NoError(t, s.holdAt(t, closed.Version, "read closed"), "the cache's to refuse")

	// Out of tries: set aside and counted (/healthz outbox_dead).
	refuse(true)
	reopened, err := s.a.Organizer.ChangeStatus(ctx, s.owner, s.e.ID, nil, string(event.OnSale))
	require.NoError(t, err)
	for range 3 {
		_, err = worker.Fulfil(ctx)
		require.ErrorContains(t, err, "shard down")
		due()
	}
	_, dead := pending()
	require.True(t, dead)
	count, err := worker.DeadMessages(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, count)
	require.NoError(t, s.holdAt(t, reopened.Version, "reopened, not copied"),
		"a copy that never lands cannot refuse holds that read the sale open after it")
	refuse(false)
	_, err = s.a.Catalog.Exec(ctx, `UPDATE outbox SET dead_at = NULL, attempts = 0, retry_at = NULL WHERE dead_at IS NOT NULL`)
	require.NoError(t, err)
	_, err = worker.Fulfil(ctx)
	require.NoError(t, err)
	require.NoError(t, s.holdAt(t, s.e.Version, "reopened"), "the redriven copy of the reopening landed")
}

// TestSaleEndMovedToNowStopsHolds: an organizer who moves the sale's end
// to now stops holds at once, although the sale path reads the event
// through a cache that still has the old end.
func TestSaleEndMovedToNowStopsHolds(t *testing.T) {
	t.Parallel()
	s := newOnSale(t)
	now := time.Now()
	ended, err := s.a.Organizer.UpdateEvent(s.ctx, s.owner, s.e.ID, nil, organizer.EventPatch{SaleEndsAt: &now})
	require.NoError(t, err)
	require.ErrorIs(t, s.holdAt(t, s.e.Version, "cached"), shardstore.ErrSaleStopped)
	later := now.Add(time.Hour)
	_, err = s.a.Organizer.UpdateEvent(s.ctx, s.owner, s.e.ID, nil, organizer.EventPatch{SaleEndsAt: &later})
	require.NoError(t, err)
	require.NoError(t, s.holdAt(t, ended.Version, "extended"), "moved back out, the sale goes on")
	var pending int
	require.NoError(t, s.a.Catalog.QueryRow(s.ctx, `SELECT count(*) FROM outbox WHERE processed_at IS NULL`).Scan(&pending))
	require.Zero(t, pending, "copied at once, nothing is left for the worker")
}

// TestCancelledStaysCancelled: status changes racing a cancel are ordered
// by the event's row lock. The cancels all succeed (cancelling again asks
// the failed refunds again); every other change either committed before
// the first cancel or is refused; the event ends cancelled, in the catalog
// and in its shard's copy, and stays so.
func TestCancelledStaysCancelled(t *testing.T) {
	t.Parallel()
	s := newOnSale(t)
	ctx := s.ctx
	const writers = 12
	errs := make(chan error, writers)
	for i := range writers {
		status := []event.Status{event.Cancelled, event.OnSale, event.Closed}[i%3]
		go func() {
			changed, err := s.a.Organizer.ChangeStatus(ctx, s.owner, s.e.ID, nil, string(status))
			switch {
			case status == event.Cancelled && err == nil && changed.Status != event.Cancelled:
				err = errors.New("a cancel answered " + string(changed.Status))
			case status != event.Cancelled && errors.Is(err, organizer.ErrInvalidEvent):
				err = nil // refused: the event was cancelled first
			}
			errs <- err
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	for _, status := range []event.Status{event.OnSale, event.Closed, event.Scheduled} {
		_, err := s.a.Organizer.ChangeStatus(ctx, s.owner, s.e.ID, nil, string(status))
		require.ErrorIs(t, err, organizer.ErrInvalidEvent, "%s after the cancel", status)
	}
	again, err := s.a.Organizer.ChangeStatus(ctx, s.owner, s.e.ID, nil, string(event.Cancelled))
	require.NoError(t, err, "cancelling again is allowed")
	require.Equal(t, event.Cancelled, again.Status)
	var copied string
	require.NoError(t, s.shard.QueryRow(ctx, `SELECT status FROM event_status WHERE event_id = $1`, s.e.ID).Scan(&copied))
	require.Equal(t, string(event.Cancelled), copied, "the shard's copy")
}
