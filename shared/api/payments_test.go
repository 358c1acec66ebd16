package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

// Tests of what the shop does with money it did not expect: charges for
// ended holds, for the wrong amount or reference, refunds and disputes made
// at the PSP. Each ends with the PSP's ledger: what it kept is what the paid
// orders are worth.

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Flush keeps event streams working through the recorder.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// checkout starts payment of an order and returns its PSP payment.
func (s *shop) checkout(t testing.TB, f *fan, orderID int64) psp.Payment {
	t.Helper()
	r := f.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil)
	require.Less(t, r.Status, 300, string(r.Raw))
	return s.payment(t, orderID)
}

// simPayment is the simulator's view of a payment.
func (s *shop) simPayment(id string) psp.Payment {
	for _, p := range s.sim.Payments() {
		if p.ID == id {
			return p
		}
	}
	return psp.Payment{}
}

// given tells whether the PSP gave a payment's money back.
func (s *shop) givenBack(id string) bool {
	for _, e := range s.sim.Ledger() {
		if e.Payment == id && e.Amount < 0 {
			return true
		}
	}
	return false
}

// catalog changes an event behind the organizer's back.
func (s *shop) catalog(t testing.TB, q string) {
	t.Helper()
	_, err := s.app.Catalog.Exec(context.Background(), q, s.eventID)
	require.NoError(t, err)
}

// paidTicketCount counts an account's tickets in paid orders.
func (s *shop) paidTicketCount(t testing.TB, account int64) int {
	return s.count(t, `SELECT coalesce(sum(ticket_count), 0)::int FROM orders WHERE user_id = $1 AND status = 'paid'`, account)
}

// requireMoneyConserved: what the PSP kept, per currency, is what the paid
// orders are worth, and each paid order was paid its total in its currency.
func (s *shop) requireMoneyConserved(t testing.TB) {
	t.Helper()
	ledger := s.sim.Ledger()
	worth := map[string]int64{}
	byOrder := ledger.NetByOrder()
	for _, id := range s.app.Shards.IDs() {
		pool, _ := s.app.Shards.Pool(id)
		rows, err := pool.Query(context.Background(), `SELECT id, total_cents - coalesce((SELECT sum(amount_cents) FROM refunds f
			WHERE f.order_id = o.id AND f.tickets IS NOT NULL AND f.status = 'succeeded'), 0), upper(currency)
			FROM orders o WHERE status = 'paid'`)
		require.NoError(t, err)
		for rows.Next() {
			var order, total int64
			var currency string
			require.NoError(t, rows.Scan(&order, &total, &currency))
			worth[currency] += total
			require.Equal(t, total, byOrder[order][currency], "order %d is paid %d %s (less its partial refunds)", order, total, currency)
		}
		require.NoError(t, rows.Err())
	}
	net := ledger.Net()
	for c, v := range net {
		if v == 0 {
			delete(net, c)
		}
	}
	require.Equal(t, worth, net, "charges − refunds at the PSP = what paid orders are worth")
}

// metric sums a metric over the app's log lines.
func (s *shop) metric(name string) float64 {
	total := 0.0
	sc := bufio.NewScanner(bytes.NewReader(s.logs.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			v, _ := line[name].(float64)
			total += v
		}
	}
	return total
}

// TestPayingEndedHoldsKeepsTheLimit: hold → checkout → release, three times
// (limit 6, 4 seats each), then every open payment page is paid. Releasing
// cancels the payment at the PSP, so the pages take no card; when the PSP
// cannot be told in time, a charge for a released hold re-takes its places
// only as a new hold could (limit, sale window, no waiting room) and is
// refunded otherwise.
func TestPayingEndedHoldsKeepsTheLimit(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	seats := s.seats
	take := func(n int) []int64 {
		out := seats[:n]
		seats = seats[n:]
		return out
	}
	type round struct {
		f       *fan
		hold    int64
		order   int64
		payment psp.Payment
	}
	start := func(f *fan, key string, n int) round {
		holdID, orderID := s.hold(t, f, key, take(n)...)
		return round{f, holdID, orderID, s.checkout(t, f, orderID)}
	}
	release := func(r round) {
		res := r.f.do(http.MethodDelete, "/api/holds/"+itoa(r.hold), nil)
		require.Equal(t, http.StatusOK, res.Status, string(res.Raw))
	}
	ana := newFan(t, s.srv)
	anaID := ana.signUp("ana@example.com")
	for i := range 3 {
		r := start(ana, fmt.Sprint("a", i), 4)
		release(r)
		p := r.payment
		waitUntil(t, 10*time.Second, func() bool { return s.simPayment(p.ID).Status == psp.StatusCanceled },
			"the released hold's payment to be canceled at the PSP")
		got, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
		require.NoError(t, err)
		require.Equal(t, psp.StatusCanceled, got.Status, "a canceled page takes no card")
	}

	// The outbox stops (the cancellations do not reach the PSP in time):
	// the pages are paid and the webhooks arrive for cancelled orders.
	s.stopWorkers()
	bia, carol, dan := newFan(t, s.srv), newFan(t, s.srv), newFan(t, s.srv)
	biaID := bia.signUp("bia@example.com")
	carol.signUp("carol@example.com")
	dan.signUp("dan@example.com")
	var biaOrders []int64
	var biaPays []psp.Payment
	for i := range 3 {
		r := start(bia, fmt.Sprint("b", i), 4)
		release(r)
		biaOrders, biaPays = append(biaOrders, r.order), append(biaPays, r.payment)
	}
	carolRound, danRound := start(carol, "c", 2), start(dan, "d", 2)
	release(carolRound)
	release(danRound)
	for _, p := range biaPays {
		_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
		require.NoError(t, err)
	}
	statuses := func(ids ...int64) map[string]int {
		out := map[string]int{}
		for _, id := range ids {
			out[s.orderStatus(t, bia, id).Body["status"].(string)]++
		}
		return out
	}
	waitUntil(t, 10*time.Second, func() bool { return statuses(biaOrders...)["pending"]+statuses(biaOrders...)["cancelled"] == 0 },
		"every charge to be applied")
	// One order fits the limit; the others' charges are being given back
	// (refunded once the PSP confirms: below).
	require.Equal(t, 1, statuses(biaOrders...)["paid"], "one order fits the limit")

	carolOrder, carolPay := carolRound.order, carolRound.payment
	danOrder, danPay := danRound.order, danRound.payment
	// Dan pays after the event got a waiting room: a payment carries no admission.
	s.catalog(t, `UPDATE events SET waiting_room = true WHERE id = $1`)
	_, err := s.sim.Pay(danPay.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, dan, danOrder).Body["status"] != "cancelled" },
		"a charge without admission to be refused")
	// Carol pays after the sale closed.
	s.catalog(t, `UPDATE events SET waiting_room = false, sale_ends_at = now() - interval '1 second' WHERE id = $1`)
	_, err = s.sim.Pay(carolPay.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, carol, carolOrder).Body["status"] != "cancelled" },
		"a charge after the sale to be refused")

	_, err = s.app.Orders.Fulfil(context.Background()) // the outbox runs again
	require.NoError(t, err)
	waitUntil(t, 15*time.Second, func() bool {
		n := 0
		for _, p := range append(biaPays, carolPay, danPay) {
			if s.givenBack(p.ID) {
				n++
			}
		}
		return n == 4
	}, "the refused charges to be refunded")
	given := append(slices.DeleteFunc(biaOrders, func(id int64) bool { return statuses(id)["paid"] == 1 }), carolOrder, danOrder)
	waitUntil(t, 10*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM orders WHERE id = ANY($1) AND status = 'refunded'`, given) == len(given)
	}, "the orders given back to read refunded once the PSP confirmed")
	require.Zero(t, s.paidTicketCount(t, anaID))
	require.Equal(t, 4, s.paidTicketCount(t, biaID), "within the limit of 6")
	require.Equal(t, 4.0, s.metric(metrics.ChargesRefunded))
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestWebhookChecksWhatWasPaid: signed charges for 1 cent, in another
// currency, or under a reference that is not the order's payment are
// refunded and counted, never paid; the real payment still pays the order.
func TestWebhookChecksWhatWasPaid(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, orderID := s.buyer(t, "ana@example.com")
	p := s.checkout(t, ana, orderID)
	o := s.orderStatus(t, ana, orderID).Body
	total, currency := int64(o["total_cents"].(float64)), o["currency"].(string)
	wrong := []psp.CreatePayment{
		{Amount: 1, Currency: currency, OrderID: orderID, Reference: p.Reference},
		{Amount: total, Currency: "JPY", OrderID: orderID, Reference: p.Reference},
		{Amount: total, Currency: currency, OrderID: orderID, Reference: fmt.Sprintf("order-%d-9", orderID)},
	}
	for _, c := range wrong {
		charge := s.sim.Charge(c)
		waitUntil(t, 10*time.Second, func() bool { return s.givenBack(charge.ID) }, "%d %s under %s to be refunded", c.Amount, c.Currency, c.Reference)
		require.Equal(t, "pending", s.orderStatus(t, ana, orderID).Body["status"])
	}
	require.Equal(t, float64(len(wrong)), s.metric(metrics.PaymentMismatches))

	_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, orderID).Body["status"] == "paid" }, "the real payment")
	require.Len(t, s.orderStatus(t, ana, orderID).Body["tickets"], 1)
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestUnmatchedChargesAreRefundedAndNeverBlock: charges the shop cannot
// match (an unknown reference on an order that has a live payment, an
// order id that routes nowhere) are acknowledged and refunded, and the
// reconciler applies the events after them.
func TestUnmatchedChargesAreRefundedAndNeverBlock(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{WebhookOutage: true}) // webhooks lost: the reconciler applies everything
	ana, anaOrder := s.buyer(t, "ana@example.com")
	s.checkout(t, ana, anaOrder)
	bia := newFan(t, s.srv)
	bia.signUp("bia@example.com")
	_, biaOrder := s.hold(t, bia, "b", s.seats[1])
	pb := s.checkout(t, bia, biaOrder)

	unknown := s.sim.Charge(psp.CreatePayment{Amount: 700, Currency: "BRL", OrderID: anaOrder, Reference: fmt.Sprintf("order-%d-7", anaOrder)})
	nowhere := s.sim.Charge(psp.CreatePayment{Amount: 700, Currency: "BRL", OrderID: 99_999_999, Reference: "elsewhere"})
	_, err := s.sim.Pay(pb.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	n, err := s.app.Orders.Reconcile(context.Background(), time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Equal(t, 6, n, "each charge: payment_intent.succeeded (ignored: its session's event applies it) and checkout.session.completed")
	require.Equal(t, "paid", s.orderStatus(t, bia, biaOrder).Body["status"], "the event after the unmatched ones was applied")
	waitUntil(t, 10*time.Second, func() bool { return s.givenBack(unknown.ID) && s.givenBack(nowhere.ID) }, "the unmatched charges to be refunded")
	require.Equal(t, 2.0, s.metric(metrics.PaymentMismatches))

	// Delivered by webhook, an unmatched charge is acknowledged (2xx), not
	// retried forever.
	stray := s.sim.Charge(psp.CreatePayment{Amount: 5, Currency: "BRL", OrderID: anaOrder, Reference: "stray"})
	body := s.sim.EventBody("checkout.session.completed", stray.ID)
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/api/psp/webhook", bytes.NewReader(body))
	req.Header.Set("Stripe-Signature", pspsim.Sign(s.secret, time.Now(), body))
	req.Header.Set("Content-Type", "application/json") // as the PSP sends it
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNoContent, res.StatusCode)
	waitUntil(t, 10*time.Second, func() bool { return s.givenBack(stray.ID) }, "the stray charge to be refunded")
	require.Equal(t, "pending", s.orderStatus(t, ana, anaOrder).Body["status"])
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// paidOrder signs a fan up, and holds and pays for seats.
func (s *shop) paidOrder(t testing.TB, email string, seats ...int64) (*fan, int64, psp.Payment) {
	t.Helper()
	f := newFan(t, s.srv)
	f.signUp(email)
	_, orderID := s.hold(t, f, "h", seats...)
	p := s.checkout(t, f, orderID)
	_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, f, orderID).Body["status"] == "paid" }, "the order to be paid")
	return f, orderID, p
}

// TestRefundAtThePSPVoidsTheOrder: a refund from the PSP's dashboard and a
// dispute each turn a paid order refunded and void its tickets.
func TestRefundAtThePSPVoidsTheOrder(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{Duplicates: 1})
	ana, anaOrder, anaPay := s.paidOrder(t, "ana@example.com", s.seats[:2]...)
	bia, biaOrder, biaPay := s.paidOrder(t, "bia@example.com", s.seats[2])
	_, err := s.sim.RefundAtPSP(anaPay.ID)
	require.NoError(t, err)
	_, err = s.sim.Dispute(biaPay.ID)
	require.NoError(t, err)
	for _, c := range []struct {
		f     *fan
		order int64
	}{{ana, anaOrder}, {bia, biaOrder}} {
		waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, c.f, c.order).Body["status"] == "refunded" },
			"order %d to be refunded", c.order)
		tickets := s.orderStatus(t, c.f, c.order).Body["tickets"].([]any)
		require.NotEmpty(t, tickets)
		for _, tk := range tickets {
			require.Equal(t, true, tk.(map[string]any)["void"], "tickets of a refunded order are void")
		}
	}
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestReleaseWhileThePSPMakesThePaymentCancelsIt: the hold is released
// while checkout waits on a slow PSP; the payment the PSP then makes is
// cancelled there too, so its page cannot charge for places given back.
func TestReleaseWhileThePSPMakesThePaymentCancelsIt(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{Latency: time.Second})
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	holdID, orderID := s.hold(t, ana, "a", s.seats[0])
	done := make(chan response, 1)
	go func() { done <- ana.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil) }()
	waitUntil(t, 10*time.Second, func() bool {
		return s.count(t, `SELECT count(*)::int FROM payments WHERE order_id = $1`, orderID) == 1
	}, "checkout to record its attempt")
	r := ana.do(http.MethodDelete, "/api/holds/"+itoa(holdID), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Less(t, (<-done).Status, 500)
	p := s.payment(t, orderID)
	waitUntil(t, 15*time.Second, func() bool { return s.simPayment(p.ID).Status == psp.StatusCanceled },
		"the payment made after the release to be canceled at the PSP")
	require.Zero(t, s.errors5xx.Load())
}

// TestAPaidOrderShowsThePaymentThatPaidIt: a declined first attempt paid
// after all, beside a second attempt paid too, showed the order paid with
// its payment "refunded" (the duplicate, the latest attempt) to the fan
// (outsider's paidrefunded.py).
func TestAPaidOrderShowsThePaymentThatPaidIt(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, orderID := s.buyer(t, "ana@example.com")
	first := s.checkout(t, ana, orderID)
	_, err := s.sim.Pay(first.ID, pspsim.CardDeclined)
	require.NoError(t, err)
	waitUntil(t, 5*time.Second, func() bool {
		pay, _ := s.orderStatus(t, ana, orderID).Body["payment"].(map[string]any)
		return pay != nil && pay["status"] == "failed"
	}, "the failure")
	require.Less(t, ana.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil).Status, 300)
	waitUntil(t, 5*time.Second, func() bool { return s.sim.Stats().Payments == 2 }, "a second attempt")
	second := s.payment(t, orderID)
	// The first attempt pays, and only once the order is paid does the
	// second: two webhooks in flight at once may land in either order.
	_, err = s.sim.Pay(first.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 5*time.Second, func() bool { return s.orderStatus(t, ana, orderID).Body["status"] == "paid" }, "the first attempt to pay")
	_, err = s.sim.Pay(second.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool {
		s.app.Orders.Fulfil(context.Background()) // the outbox asks the refund
		return s.givenBack(first.ID) || s.givenBack(second.ID)
	}, "the duplicate to be refunded")
	require.False(t, s.givenBack(first.ID), "the first attempt paid the order")
	shown := func(o map[string]any) []any {
		p := o["payment"].(map[string]any)
		return []any{o["status"], p["status"], p["attempt"]}
	}
	want := []any{"paid", "succeeded", 1.0}
	require.Equal(t, want, shown(s.orderStatus(t, ana, orderID).Body))
	mine := ana.do(http.MethodGet, "/api/me/orders", nil).Body["orders"].([]any)
	require.Equal(t, want, shown(mine[0].(map[string]any)))
	s.requireMoneyConserved(t)
}
