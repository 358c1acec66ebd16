package api_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/pspsim"
)

// A hold right after the organizer closes or cancels the sale is refused:
// the sale path reads events through a cache of about 2 s, and a hold in
// that window succeeded (a closed sale's could even be paid and sold), as
// did the checkout of an order of a cancelled event. Reopening lets holds
// through as soon as they read the reopened event.
func TestHoldsRightAfterTheSaleStopsAreRefused(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	f := newFan(t, s.srv)
	f.signUp("quick@example.com")
	path := "/api/events/" + itoa(s.eventID)
	hold := func(key string, seat int64) response {
		return f.do(http.MethodPost, path+"/holds", map[string]any{"seats": []int64{seat}}, "Idempotency-Key", key)
	}
	s.hold(t, f, "warm", s.seats[0]) // the event is cached, on sale
	setStatus := func(status string) {
		r := org.do(http.MethodPut, path+"/status", map[string]any{"status": status})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}

	setStatus("closed")
	refused := func(r response) {
		t.Helper()
		requireProblem(t, r, http.StatusForbidden, "sales-closed")
		require.Equal(t, "Sales for this event are not open.", r.Body["detail"])
	}
	refused(hold("after-close", s.seats[1]))
	setStatus("on_sale")
	tries := int64(0)
	var orderID any
	waitUntil(t, 10*time.Second, func() bool {
		tries++
		r := hold("reopened-"+itoa(tries), s.seats[1])
		orderID = r.Body["order_id"]
		return r.Status == http.StatusCreated
	}, "holds to go through once the sale reopens")

	setStatus("cancelled")
	refused(hold("after-cancel", s.seats[2]))
	// Nor does checkout start a payment it would have to refund.
	requireRefusal(t, f.do(http.MethodPost, fmt.Sprintf("/api/orders/%v/checkout", orderID), nil),
		http.StatusConflict, "order-not-payable", "This event was cancelled: its orders can no longer be paid.", "")
	require.Zero(t, s.count(t, `SELECT count(*)::int FROM payments`))
	require.Equal(t, 2, s.count(t, `SELECT count(*)::int FROM holds`), "the warm-up's and the reopened sale's")
}

// A hold right after the organizer moves the sale's end to now is refused
// too: the cached event still has the old end.
func TestHoldsRightAfterTheSaleEndsAreRefused(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	f := newFan(t, s.srv)
	f.signUp("late@example.com")
	path := "/api/events/" + itoa(s.eventID)
	s.hold(t, f, "warm", s.seats[0]) // the event is cached, on sale
	r := org.do(http.MethodPatch, path, map[string]any{"sale_ends_at": time.Now().UTC().Format(time.RFC3339Nano)})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = f.do(http.MethodPost, path+"/holds", map[string]any{"seats": []int64{s.seats[1]}}, "Idempotency-Key", "after-end")
	requireProblem(t, r, http.StatusForbidden, "sales-closed")
}
