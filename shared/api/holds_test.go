package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

func TestHoldsOverHTTP(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 2)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)

	venueID := importVenue(t, o, venue.Stadium("HTTP Arena", "Salvador", 100, 5))
	otherVenue := importVenue(t, o, venue.Stadium("Other Arena", "Natal", 100, 5))
	eventID := createEvent(t, o, venueID, "Open Show", false)
	gatedID := createEvent(t, o, venueID, "Gated Show", true)
	seats, foreign := seatIDs(t, a, venueID), seatIDs(t, a, otherVenue)

	ana := newFan(t, srv)
	anaID := ana.signUp("ana@example.com")
	bia := newFan(t, srv)
	bia.signUp("bia@example.com")
	holds := "/api/events/" + itoa(eventID) + "/holds"

	requireProblem(t, newFan(t, srv).do(http.MethodPost, holds, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "x"),
		http.StatusUnauthorized, "unauthenticated")
	requireProblem(t, ana.do(http.MethodPost, holds, map[string]any{"seats": seats[:1]}), http.StatusBadRequest, "idempotency-key-required")

	r := ana.do(http.MethodPost, holds, map[string]any{"seats": seats[:2]}, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	holdID := int64(r.Body["hold_id"].(float64))
	items := r.Body["items"].([]any)
	require.Len(t, items, 2)
	sum := items[0].(map[string]any)["price_cents"].(float64) + items[1].(map[string]any)["price_cents"].(float64)
	require.Equal(t, sum, r.Body["total_cents"], "the order total is the sum of the copied prices")
	require.NotEmpty(t, r.Body["expires_at"])

	replay := ana.do(http.MethodPost, holds, map[string]any{"seats": seats[:2]}, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusOK, replay.Status)
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.Equal(t, r.Body["order_id"], replay.Body["order_id"])
	requireProblem(t, ana.do(http.MethodPost, holds, map[string]any{"seats": seats[2:3]}, "Idempotency-Key", "k1"),
		http.StatusUnprocessableEntity, "idempotency-key-reused")

	taken := bia.do(http.MethodPost, holds, map[string]any{"seats": []int64{seats[1], seats[5]}}, "Idempotency-Key", "k2")
	requireProblem(t, taken, http.StatusConflict, "seats-taken")
	require.Equal(t, []any{float64(seats[1])}, taken.Body["seats"])
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"seats": []int64{987654321}}, "Idempotency-Key", "k3"),
		http.StatusNotFound, "seat-not-found")
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"seats": foreign[:1]}, "Idempotency-Key", "k4"),
		http.StatusBadRequest, "seat-of-another-event")
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"pool": "FLOOR", "quantity": 0}, "Idempotency-Key", "k5"),
		http.StatusBadRequest, "invalid-hold")
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"pool": "FLOOR", "quantity": 9}, "Idempotency-Key", "k6"),
		http.StatusBadRequest, "invalid-hold")
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"seats": "all"}, "Idempotency-Key", "k7"),
		http.StatusBadRequest, "invalid-field")
	r = bia.do(http.MethodPost, holds, map[string]any{"pool": "FLOOR", "quantity": 4}, "Idempotency-Key", "k8")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	requireProblem(t, ana.do(http.MethodPost, holds, map[string]any{"pool": "FLOOR", "quantity": 2}, "Idempotency-Key", "k9"),
		http.StatusConflict, "sold-out")
	requireProblem(t, ana.do(http.MethodPost, "/api/events/99999/holds", map[string]any{"seats": seats[:1]}, "Idempotency-Key", "k10"),
		http.StatusNotFound, "event-not-found")

	// Releasing: others cannot see the hold; the owner frees it at once.
	requireProblem(t, bia.do(http.MethodDelete, "/api/holds/"+itoa(holdID), nil), http.StatusNotFound, "hold-not-found")
	r = ana.do(http.MethodDelete, "/api/holds/"+itoa(holdID), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "released", r.Body["status"])
	r = bia.do(http.MethodPost, holds, map[string]any{"seats": seats[:2]}, "Idempotency-Key", "k11")
	require.Equal(t, http.StatusCreated, r.Status, "released seats are holdable at once")

	// The waiting-room gate: no token, a token for another account, then a good one.
	gated := "/api/events/" + itoa(gatedID) + "/holds"
	requireProblem(t, ana.do(http.MethodPost, gated, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "g1"),
		http.StatusForbidden, "admission-required")
	wrong, _, err := a.Admissions.Issue(token.Claims{Account: anaID + 1000, Event: gatedID}, time.Minute)
	require.NoError(t, err)
	requireProblem(t, ana.do(http.MethodPost, gated, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "g2", "X-Admission-Token", wrong),
		http.StatusForbidden, "admission-required")
	ctl := a.Admission()
	e, err := a.Events.Get(context.Background(), gatedID)
	require.NoError(t, err)
	_, err = ctl.Tick(context.Background(), e) // publishes and draws: the sale started an hour ago
	require.NoError(t, err)
	require.Equal(t, "waiting", ana.do(http.MethodPost, "/api/events/"+itoa(gatedID)+"/queue", nil).Body["state"])
	_, err = ctl.Tick(context.Background(), e)
	require.NoError(t, err)
	r = ana.do(http.MethodGet, "/api/events/"+itoa(gatedID)+"/queue", nil)
	require.Equal(t, "admitted", r.Body["state"], string(r.Raw))
	good := r.Body["admission_token"].(string)
	r = ana.do(http.MethodPost, gated, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "g3", "X-Admission-Token", good)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))

	// Organizers close sales; fans then get 403.
	r = o.do(http.MethodPut, "/api/events/"+itoa(eventID)+"/status", map[string]any{"status": "closed"})
	require.Equal(t, http.StatusOK, r.Status)
	// The sale path caches events for 2 s: another API process, with no
	// cached copy, tells at once (no sleeping for the TTL).
	requireProblem(t, ana.on(serve(t, a)).do(http.MethodPost, holds, map[string]any{"seats": seats[10:11]}, "Idempotency-Key", "k12"),
		http.StatusForbidden, "sales-closed")
	requireProblem(t, ana.do(http.MethodPut, "/api/events/"+itoa(eventID)+"/status", map[string]any{"status": "on_sale"}),
		http.StatusForbidden, "organizer-only")
	requireProblem(t, o.do(http.MethodPut, "/api/events/"+itoa(eventID)+"/status", map[string]any{"status": "sold"}),
		http.StatusBadRequest, "invalid-event")
}

// A standing hold at the highest price an organizer may set costs more
// than PostgreSQL's int: its total was summed as quantity * price in int
// and overflowed, a 500 for 22 places at R$ 1,000,000 (the bounds allow
// 1,000 places a hold).
func TestStandingHoldTotalsBeyondInt32(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Dear Arena", "Salvador", 100, 5000))
	now := time.Now().UTC()
	const price = 100_000_000
	r := o.do(http.MethodPost, "/api/events", map[string]any{
		"venue_id": venueID, "layout_version": 1, "name": "Dear Show",
		"starts_at": now.Add(72 * time.Hour), "sale_starts_at": now.Add(-time.Hour), "sale_ends_at": now.Add(71 * time.Hour),
		"max_per_hold": 1000, "max_per_account": 1000,
		"price_levels": []map[string]any{{"code": "A", "price_cents": price}, {"code": "B", "price_cents": price}, {"code": "C", "price_cents": price}, {"code": "GA", "price_cents": price}},
	})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	id := itoa(int64(r.Body["id"].(float64)))
	require.Equal(t, http.StatusOK, o.do(http.MethodPut, "/api/events/"+id+"/status", map[string]any{"status": "on_sale"}).Status)

	f := newFan(t, srv)
	f.signUp("dear@example.com")
	r = f.do(http.MethodPost, "/api/events/"+id+"/holds", map[string]any{"pool": "FLOOR", "quantity": 1000}, "Idempotency-Key", "k1")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, int64(1000)*price, r.Body["total_cents"])
}
