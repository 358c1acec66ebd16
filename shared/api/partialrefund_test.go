package api_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/pspsim"
)

// ticketIDs reads an order's ticket ids, in order.
func ticketIDs(t testing.TB, body map[string]any) []int64 {
	t.Helper()
	var ids []int64
	for _, tk := range body["tickets"].([]any) {
		ids = append(ids, int64(tk.(map[string]any)["id"].(float64)))
	}
	return ids
}

// TestOrganizerRefundsSomeTickets: the box office gives back one ticket of
// three with a reason: only that ticket's price goes back at the PSP, the
// ticket is void (for the fan and the door), the order stays paid and
// partly refunded, and the CSV export says how much and why. The same
// ticket again is a 409; the two others later refund the order whole.
func TestOrganizerRefundsSomeTickets(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	ana, orderID, _ := s.paidOrder(t, "ana@example.com", s.seats[:3]...)
	refund := "/api/orders/" + itoa(orderID) + "/refund"
	before := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil)
	tickets := ticketIDs(t, before.Body)
	require.Len(t, tickets, 3)
	price := int64(before.Body["tickets"].([]any)[0].(map[string]any)["price_cents"].(float64))
	require.Positive(t, price)

	requireProblem(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[0]}}), http.StatusBadRequest, "refund-reason-missing")
	requireProblem(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[0]}, "reason": "bored"}), http.StatusBadRequest, "invalid-refund")
	requireProblem(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{}, "reason": "fraud"}), http.StatusBadRequest, "refund-tickets-empty")
	requireRefusal(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[0], 999999}, "reason": "fraud"}),
		http.StatusBadRequest, "invalid-refund", "Ticket #999999 is not a ticket of order "+itoa(orderID)+".", "/tickets")

	r := o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[1]}, "reason": "customer_request", "note": "Cannot come"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "paid", r.Body["status"], "a partial refund leaves the order paid")
	require.EqualValues(t, price, r.Body["refunded_cents"])
	void := map[int64]bool{}
	for _, tk := range r.Body["tickets"].([]any) {
		void[int64(tk.(map[string]any)["id"].(float64))] = tk.(map[string]any)["void"] == true
	}
	require.Equal(t, map[int64]bool{tickets[0]: false, tickets[1]: true, tickets[2]: false}, void)
	kept := r.Body["refunds"].([]any)
	require.Len(t, kept, 1)
	row := kept[0].(map[string]any)
	require.Equal(t, "succeeded", row["status"])
	require.EqualValues(t, price, row["amount_cents"])
	require.Equal(t, []any{float64(tickets[1])}, row["tickets"])
	require.Equal(t, "customer_request", row["reason"])
	require.Equal(t, "Cannot come", row["note"])
	require.NotZero(t, row["requested_by"])
	require.Equal(t, map[string]int64{"BRL": 3*price - price}, s.sim.Ledger().NetByOrder()[orderID], "the PSP gave back one ticket's price")

	requireRefusal(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[1], tickets[2]}, "reason": "duplicate_purchase"}),
		http.StatusConflict, "already-refunded", "Ticket #"+itoa(tickets[1])+" was refunded already; nothing was asked.", "/tickets")

	// The fan sees the ticket refunded; the door refuses it.
	fanView := s.orderStatus(t, ana, orderID)
	require.Equal(t, "paid", fanView.Body["status"])
	mine := ana.do(http.MethodGet, "/api/me/tickets/"+itoa(tickets[1]), nil)
	require.Equal(t, http.StatusOK, mine.Status, string(mine.Raw))
	require.Equal(t, "void", mine.Body["ticket"].(map[string]any)["status"])
	require.Equal(t, true, mine.Body["ticket"].(map[string]any)["refunded"])
	other := ana.do(http.MethodGet, "/api/me/tickets/"+itoa(tickets[0]), nil)
	require.Equal(t, "valid", other.Body["ticket"].(map[string]any)["status"], "the other tickets still admit")

	exported := o.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/orders.csv", nil)
	require.Equal(t, http.StatusOK, exported.Status, string(exported.Raw))
	rows, err := csv.NewReader(strings.NewReader(string(exported.Raw))).ReadAll()
	require.NoError(t, err)
	require.Equal(t, []string{"refunded", "refund_reason", "refund_note"}, rows[0][9:])
	require.Equal(t, []string{money(price), "customer_request", "Cannot come"}, rows[1][9:])

	// The rest later: the order is refunded whole, the charge all back.
	r = o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[2], tickets[0]}, "reason": "event_changed"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refunded", r.Body["status"])
	require.Equal(t, map[string]int64{"BRL": 0}, s.sim.Ledger().NetByOrder()[orderID])
	require.Len(t, r.Body["refunds"].([]any), 2)
	r = o.do(http.MethodPost, refund, nil)
	require.Equal(t, http.StatusOK, r.Status, "a whole refund of a refunded order answers it: %s", r.Raw)
	requireProblem(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[0]}, "reason": "fraud"}), http.StatusConflict, "already-refunded")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// money writes cents as the export does.
func money(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

// TestOverlappingPartialRefundsRefundEachTicketOnce: many organizers at
// once refund overlapping sets of one order's tickets (each set its own
// idempotency key, so the PSP cannot tell them apart): every ticket's price
// goes back at most once, each ticket is claimed by one refund, and what
// the PSP gave back is what the void tickets cost.
func TestOverlappingPartialRefundsRefundEachTicketOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	_, orderID, _ := s.paidOrder(t, "ana@example.com", s.seats[:4]...)
	refund := "/api/orders/" + itoa(orderID) + "/refund"
	d := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil)
	tickets := ticketIDs(t, d.Body)
	price := int64(d.Body["tickets"].([]any)[0].(map[string]any)["price_cents"].(float64))

	// Pairs and singles, never all four: every request is partial.
	var sets [][]int64
	for i := range tickets {
		sets = append(sets, []int64{tickets[i]}, []int64{tickets[i], tickets[(i+1)%len(tickets)]})
	}
	const clicks = 24
	var wg sync.WaitGroup
	statuses := make([]int, clicks)
	for i := range clicks {
		set := sets[rand.IntN(len(sets))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = o.do(http.MethodPost, refund, map[string]any{"tickets": set, "reason": "duplicate_purchase"}).Status
		}()
	}
	wg.Wait()
	for _, st := range statuses {
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, st)
	}

	pool, err := s.app.Shards.ForRow(orderID)
	require.NoError(t, err)
	var twice int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM (SELECT tk FROM refunds, unnest(tickets) tk
		WHERE order_id = $1 AND status = 'succeeded' GROUP BY tk HAVING count(*) > 1) x`, orderID).Scan(&twice))
	require.Zero(t, twice, "no ticket is in two succeeded refunds")
	var voided int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM tickets WHERE order_id = $1 AND void_at IS NOT NULL`, orderID).Scan(&voided))
	var back int64
	for _, e := range s.sim.Ledger() {
		if e.OrderID == orderID && e.Amount < 0 {
			back -= e.Amount
		}
	}
	require.Equal(t, voided*price, back, "the PSP gave back exactly the void tickets' prices")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// refundStatuses reads an order's refunds as the console lists them.
func refundStatuses(t testing.TB, o *fan, orderID int64) []string {
	t.Helper()
	r := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	var out []string
	for _, f := range r.Body["refunds"].([]any) {
		out = append(out, f.(map[string]any)["status"].(string))
	}
	return out
}

// TestPendingPartialRefundSucceedsByItsWebhook: a partial refund the PSP
// accepts as pending reads succeeded once the bank gives the money back
// (refund.updated, then charge.refunded with refunded false), as a
// whole-order refund does; the last tickets then refund the order whole.
func TestPendingPartialRefundSucceedsByItsWebhook(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{RefundsPending: true})
	o := s.organizerOf(t)
	_, orderID, _ := s.paidOrder(t, "ana-partial-pending@example.com", s.seats[:3]...)
	refund := "/api/orders/" + itoa(orderID) + "/refund"
	tickets := ticketIDs(t, o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil).Body)

	r := o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[0]}, "reason": "customer_request"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "paid", r.Body["status"])
	require.Equal(t, []string{"pending"}, refundStatuses(t, o, orderID))
	pending := s.sim.PendingRefunds()
	require.Len(t, pending, 1)
	require.NoError(t, s.sim.SettleRefund(pending[0], true))
	waitUntil(t, 10*time.Second, func() bool { return slices.Equal(refundStatuses(t, o, orderID), []string{"succeeded"}) },
		"the partial refund to read succeeded")

	r = o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[1], tickets[2]}, "reason": "event_changed"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refund_pending", r.Body["status"])
	pending = s.sim.PendingRefunds()
	require.Len(t, pending, 1)
	require.NoError(t, s.sim.SettleRefund(pending[0], true))
	waitUntil(t, 10*time.Second, func() bool {
		return slices.Equal(refundStatuses(t, o, orderID), []string{"succeeded", "succeeded"}) &&
			o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil).Body["status"] == "refunded"
	}, "the last refund to finish the order: %v", refundStatuses(t, o, orderID))
	require.Equal(t, map[string]int64{"BRL": 0}, s.sim.Ledger().NetByOrder()[orderID])
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestPartialRefundSettledBeforeItsAnswerIsRecorded: the bank settles a
// pending partial refund, and the PSP says so (refund.updated), before the
// shop has recorded the PSP's answer to the refund itself (its row still
// asking, without the PSP's refund id). The event is not taken as "a refund
// we know nothing of": it is answered 5xx, the PSP delivers it again, and
// the refund reads succeeded.
func TestPartialRefundSettledBeforeItsAnswerIsRecorded(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{RefundsPending: true})
	o := s.organizerOf(t)
	_, orderID, _ := s.paidOrder(t, "ana-early-bank@example.com", s.seats[:2]...)
	tickets := ticketIDs(t, o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil).Body)

	early := func() {
		pending := s.sim.PendingRefunds()
		require.Len(t, pending, 1)
		require.NoError(t, s.sim.SettleRefund(pending[0], true))
		// Its first delivery is answered before the refund's own answer.
		waitUntil(t, 10*time.Second, func() bool {
			return s.errors5xx.Load() > 0 || s.count(t, `SELECT count(*) FROM webhook_events WHERE type = 'refund.updated'`) > 0
		}, "the PSP's refund.updated to reach the shop")
	}
	s.beforeRefundAnswer.Store(&early)
	r := o.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/refund", map[string]any{"tickets": []int64{tickets[0]}, "reason": "customer_request"})
	s.beforeRefundAnswer.Store(nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	waitUntil(t, 10*time.Second, func() bool { return slices.Equal(refundStatuses(t, o, orderID), []string{"succeeded"}) },
		"the partial refund to read succeeded: %v", refundStatuses(t, o, orderID))
	s.requireMoneyConserved(t)
}
