package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/pspsim"
)

// TestPartialRefundFreesTheTicketLimit: tickets refunded one by one stop
// counting against the buyer's per-event limit (6) and the card's, as a
// whole refund's do.
func TestPartialRefundFreesTheTicketLimit(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, cardLimit)
	o := s.organizerOf(t)
	ana, orderID, _ := s.paidOrder(t, "six@example.com", s.seats[:4]...)
	_, more := s.buyWith(t, ana, "two-more", pspsim.CardSuccess, s.seats[4:6]...)
	require.Equal(t, "paid", more.Body["status"], "6 of 6")
	tickets := ticketIDs(t, o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil).Body)
	hold := func(f *fan, key string, seats ...int64) response {
		return f.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", map[string]any{"seats": seats}, "Idempotency-Key", key)
	}
	requireProblem(t, hold(ana, "seventh", s.seats[10]), http.StatusConflict, "ticket-limit")
	r := o.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/refund", map[string]any{"tickets": tickets[:2], "reason": "customer_request"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = hold(ana, "after-refund", s.seats[10:12]...)
	require.Equal(t, http.StatusCreated, r.Status, "2 of 6 were refunded: %s", r.Raw)
	requireProblem(t, hold(ana, "one-more", s.seats[12]), http.StatusConflict, "ticket-limit")

	// The card paid for 6 tickets, 2 of them refunded: another account
	// may pay 2 more with it.
	bia := newFan(t, s.srv)
	bia.signUp("bia-card@example.com")
	_, paid := s.buyWith(t, bia, "bia", pspsim.CardSuccess, s.seats[20:22]...)
	require.Equal(t, "paid", paid.Body["status"], "4 valid tickets on the card, 2 more make 6: %s", paid.Raw)
	s.requireMoneyConserved(t)
}

// TestPartialRefundFreesTheClusterLimit: two accounts on one device are
// one fan (docs/fairness.md); tickets of one refunded one by one stop
// counting against the cluster's limit.
func TestPartialRefundFreesTheClusterLimit(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana-cluster@example.com")
	bia := newFan(t, s.srv)
	bia.onDevice(ana.device())
	bia.signUp("bia-cluster@example.com")
	anaOrder, r := s.buyWith(t, ana, "a", pspsim.CardVisa, s.seats[0:4]...)
	require.Equal(t, "paid", r.Body["status"], "4 of 6")
	_, r = s.buyWith(t, bia, "b", pspsim.CardMastercard, s.seats[4:6]...)
	require.Equal(t, "paid", r.Body["status"], "6 of 6 for the two")

	o := s.organizerOf(t)
	tickets := ticketIDs(t, o.do(http.MethodGet, "/api/organizer/orders/"+itoa(anaOrder), nil).Body)
	r = o.do(http.MethodPost, "/api/orders/"+itoa(anaOrder)+"/refund", map[string]any{"tickets": tickets[:2], "reason": "customer_request"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	_, r = s.buyWith(t, bia, "c", pspsim.CardMastercard, s.seats[6:8]...)
	require.Equal(t, "paid", r.Body["status"], "2 of the cluster's 6 were refunded: %s", r.Raw)
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}
