package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/pspsim"
)

// refundedAtPSP is what the PSP gave back of an order's charges.
func (s *shop) refundedAtPSP(orderID int64) int64 {
	var back int64
	for _, e := range s.sim.Ledger() {
		if e.OrderID == orderID && e.Amount < 0 {
			back -= e.Amount
		}
	}
	return back
}

// recordedRefunds sums an order's succeeded refunds and counts those the
// PSP gave no refund id for.
func (s *shop) recordedRefunds(t testing.TB, orderID int64) (sum int64, noPSPID int) {
	t.Helper()
	pool, err := s.app.Shards.ForRow(orderID)
	require.NoError(t, err)
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT coalesce(sum(amount_cents), 0), count(*) FILTER (WHERE psp_refund_id IS NULL)
		FROM refunds WHERE order_id = $1 AND status = 'succeeded'`, orderID).Scan(&sum, &noPSPID))
	return sum, noPSPID
}

// TestRefundsRacingOnOneOrderRecordOnlyWhatThePSPGaveBack: on many paid
// orders of two tickets at once, a whole refund (the console's, or the
// linked-accounts void) races partial refunds of each ticket. Whatever the
// order, the refunds recorded as succeeded add up to what the PSP gave
// back, never more than the charge, each with its PSP refund id; a loser
// is told 409 (refunded already, or a refund under way); a void is
// audited once.
func TestRefundsRacingOnOneOrderRecordOnlyWhatThePSPGaveBack(t *testing.T) {
	t.Parallel()
	// A quota for every request at once: none is turned away unasked.
	s := newShopWith(t, pspsim.Faults{}, func(c *config.Config) { c.PSPRate = 500 })
	o := s.organizerOf(t)
	const orders = 8
	type paid struct {
		id      int64
		tickets []int64
		total   int64
	}
	all := make([]paid, orders)
	for i := range all {
		_, id, _ := s.paidOrder(t, "racer"+itoa(int64(i))+"@example.com", s.seats[2*i:2*i+2]...)
		d := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(id), nil)
		all[i] = paid{id, ticketIDs(t, d.Body), int64(d.Body["total_cents"].(float64))}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	voids := make([]int, orders)
	for i, p := range all {
		refund := "/api/orders/" + itoa(p.id) + "/refund"
		send := []func() response{
			func() response { return o.do(http.MethodPost, refund, nil) },
			func() response {
				return o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{p.tickets[0]}, "reason": "customer_request"})
			},
			func() response {
				return o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{p.tickets[1]}, "reason": "customer_request"})
			},
		}
		if i%2 == 1 { // two voids instead of the whole refund
			void := func() response {
				r := o.do(http.MethodPost, "/api/organizer/linked-orders/"+itoa(p.id)+"/void", map[string]any{"reason": "farm"})
				if r.Status == http.StatusOK {
					mu.Lock()
					voids[i]++
					mu.Unlock()
				}
				return r
			}
			send[0] = void
			send = append(send, void)
		}
		for _, f := range send {
			wg.Go(func() {
				<-start
				r := f()
				mu.Lock()
				statuses[r.Status]++
				mu.Unlock()
				if r.Status == http.StatusConflict {
					require.Contains(t, []string{"https://catraca.dev/problems/already-refunded", "https://catraca.dev/problems/refund-in-flight"},
						r.Body["type"], string(r.Raw))
				}
			})
		}
	}
	close(start)
	wg.Wait()
	t.Logf("answers: %v", statuses)
	for st := range statuses {
		require.Contains(t, []int{http.StatusOK, http.StatusConflict}, st)
	}
	for i, p := range all {
		sum, noID := s.recordedRefunds(t, p.id)
		back := s.refundedAtPSP(p.id)
		require.Equal(t, back, sum, "order %d: the refunds recorded as succeeded are what the PSP gave back", p.id)
		require.LessOrEqual(t, sum, p.total, "order %d", p.id)
		require.Zero(t, noID, "order %d: every succeeded refund names the PSP's refund", p.id)
		require.LessOrEqual(t, voids[i], 1, "order %d: one void", p.id)
	}
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestLastRefundCountsInRefundedCents: the refund that gives back an
// order's last tickets counts in refunded_cents (the console's and the
// fan's), and its row lists those tickets, whether the organizer picked
// them or asked for the rest with no body.
func TestLastRefundCountsInRefundedCents(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	for i, picked := range []bool{true, false} {
		ana, orderID, _ := s.paidOrder(t, "last"+itoa(int64(i))+"@example.com", s.seats[3*i:3*i+3]...)
		refund := "/api/orders/" + itoa(orderID) + "/refund"
		d := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil)
		tickets := ticketIDs(t, d.Body)
		total := d.Body["total_cents"].(float64)
		r := o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{tickets[0]}, "reason": "customer_request"})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		var body any
		if picked {
			body = map[string]any{"tickets": []int64{tickets[2], tickets[1]}, "reason": "event_changed"}
		}
		r = o.do(http.MethodPost, refund, body)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "refunded", r.Body["status"])
		require.Equal(t, total, r.Body["refunded_cents"], "the console counts the last refund")
		require.Equal(t, total, s.orderStatus(t, ana, orderID).Body["refunded_cents"], "so does the fan's order")
		rows := r.Body["refunds"].([]any)
		require.Len(t, rows, 2)
		require.Equal(t, []any{float64(tickets[1]), float64(tickets[2])}, rows[1].(map[string]any)["tickets"], "the last refund lists its tickets")
		require.Equal(t, total, float64(s.refundedAtPSP(orderID)))
	}
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestForeignTicketOnRefundedOrderIsBadRequest: a ticket not of the order
// is a 400 naming it, whether the order is paid or refunded already.
func TestForeignTicketOnRefundedOrderIsBadRequest(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	_, orderID, _ := s.paidOrder(t, "foreign@example.com", s.seats[:2]...)
	refund := "/api/orders/" + itoa(orderID) + "/refund"
	r := o.do(http.MethodPost, refund, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refunded", r.Body["status"])
	requireRefusal(t, o.do(http.MethodPost, refund, map[string]any{"tickets": []int64{1}, "reason": "other"}),
		http.StatusBadRequest, "invalid-refund", "Ticket #1 is not a ticket of order "+itoa(orderID)+".", "/tickets")
}
