package api_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

// Refunds the payment provider refuses or never answers are set aside
// where an organizer sees them, never read as done.

// refundFailures reads the organizer's refund failures.
func refundFailures(t testing.TB, org *fan) []any {
	t.Helper()
	r := org.do(http.MethodGet, "/api/organizer/refund-failures", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	failures, _ := r.Body["failures"].([]any)
	return failures
}

// pspRefunds counts the refunds the PSP made (its ledger's negative lines).
func (s *shop) pspRefunds() int {
	n := 0
	for _, e := range s.sim.Ledger() {
		if e.Amount < 0 {
			n++
		}
	}
	return n
}

// TestRefusedRefundIsSetAsideThenRetriedOnce: the PSP refuses a console
// refund (another amount than it charged); the order stays paid, the
// refusal is on the order's page, in the organizer's refund failures and
// counted. Once the cause is fixed, many retries at once refund it exactly
// once: the retry carries a new idempotency key (the PSP would replay its
// refusal under the old one).
func TestRefusedRefundIsSetAsideThenRetriedOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ana, order, _ := s.paidOrder(t, "ana-retry@example.com", s.seats[0])
	refund := "/api/orders/" + itoa(order) + "/refund"

	s.exec(t, order, `UPDATE orders SET total_cents = total_cents + 1 WHERE id = $1`)
	requireProblem(t, org.do(http.MethodPost, refund, nil), http.StatusConflict, "refund-refused")
	r := org.do(http.MethodGet, "/api/organizer/orders/"+itoa(order), nil)
	require.Equal(t, "paid", r.Body["status"], "a refused refund is not a refund")
	kept := r.Body["refunds"].([]any)
	require.Len(t, kept, 1)
	require.Equal(t, "refused", kept[0].(map[string]any)["status"])
	require.EqualValues(t, 1, kept[0].(map[string]any)["attempt"])
	failures := refundFailures(t, org)
	require.Len(t, failures, 1)
	f := failures[0].(map[string]any)
	require.EqualValues(t, order, f["order_id"])
	require.Equal(t, "refused", f["status"])
	require.Contains(t, f["failure"], "greater than unrefunded amount on charge")
	require.Equal(t, "ana-retry@example.com", f["buyer"].(map[string]any)["email"])
	require.Equal(t, 1.0, s.metric(metrics.RefundsFailed))

	s.exec(t, order, `UPDATE orders SET total_cents = total_cents - 1 WHERE id = $1`)
	before := s.refundCalls.Load()
	const clicks = 12
	for _, r := range atOnce(clicks, func() response { return org.do(http.MethodPost, refund, nil) }) {
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "refunded", r.Body["status"])
	}
	require.Equal(t, 1, s.pspRefunds(), "the PSP gave the money back once")
	require.EqualValues(t, 1, s.refundCalls.Load()-before, "the PSP was asked once for %d retries", clicks)
	require.Equal(t, "refunded", s.orderStatus(t, ana, order).Body["status"])
	require.Empty(t, refundFailures(t, org), "a refunded order is no longer a failure")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestUnansweredRefundIsRetriedUnderItsKey: while the PSP does not
// answer, the console's refund is answered 503 and kept on the order as
// unanswered (the order stays paid); the retry asks under the same
// idempotency key, so a refund the PSP made but whose answer was lost is
// never made twice.
func TestUnansweredRefundIsRetriedUnderItsKey(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	_, order, _ := s.paidOrder(t, "ana-lost@example.com", s.seats[0])
	refund := "/api/orders/" + itoa(order) + "/refund"

	s.sim.SetFaults(pspsim.Faults{Outage: true})
	requireProblem(t, org.do(http.MethodPost, refund, nil), http.StatusServiceUnavailable, "psp-unavailable")
	r := org.do(http.MethodGet, "/api/organizer/orders/"+itoa(order), nil)
	require.Equal(t, "paid", r.Body["status"])
	require.Equal(t, "unanswered", r.Body["refunds"].([]any)[0].(map[string]any)["status"])
	require.Len(t, refundFailures(t, org), 1)

	s.sim.SetFaults(pspsim.Faults{})
	r = org.do(http.MethodPost, refund, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refunded", r.Body["status"])
	for _, k := range r.Body["refunds"].([]any) {
		require.EqualValues(t, 1, k.(map[string]any)["attempt"], "an unanswered call is retried under its key")
	}
	require.Equal(t, 1, s.pspRefunds())
	require.Empty(t, refundFailures(t, org))
}

// TestGivenBackChargeIsPendingUntilThePSPConfirms: a charge the order can
// no longer keep (its event was cancelled meanwhile) is given back: the
// order reads refund_pending, not refunded, until the PSP confirms. While
// the PSP does not answer, the refund is retried; once out of tries it is
// a failure the organizer sees (order page, failures, metric), the order
// still refund_pending; the console's retry then refunds it once.
func TestGivenBackChargeIsPendingUntilThePSPConfirms(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ana := newFan(t, s.srv)
	ana.signUp("ana-late@example.com")
	_, order := s.hold(t, ana, "h", s.seats[0])
	p := s.checkout(t, ana, order)
	s.catalog(t, `UPDATE events SET status = 'cancelled' WHERE id = $1`)
	// The charge is applied (read back from the PSP), its refund never answered.
	s.sim.SetFaults(pspsim.Faults{RefundOutage: true, RetryBase: 50 * time.Millisecond})
	_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)

	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, order).Body["status"] != "pending" }, "the charge to be applied")
	require.Equal(t, "refund_pending", s.orderStatus(t, ana, order).Body["status"], "not refunded before the PSP said so")
	due := func() {
		s.exec(t, order, `UPDATE outbox SET retry_at = now() WHERE processed_at IS NULL AND (payload->>'order_id')::bigint = $1`)
	}
	waitUntil(t, 30*time.Second, func() bool { due(); return len(refundFailures(t, org)) == 1 }, "the refund to fail")
	require.Equal(t, "refund_pending", s.orderStatus(t, ana, order).Body["status"])
	f := refundFailures(t, org)[0].(map[string]any)
	require.Equal(t, "unanswered", f["status"])
	require.Contains(t, f["failure"], "no answer from the payment provider")
	require.Equal(t, 1.0, s.metric(metrics.RefundsFailed))
	require.Zero(t, s.pspRefunds())

	s.sim.SetFaults(pspsim.Faults{RetryBase: 50 * time.Millisecond})
	r := org.do(http.MethodPost, "/api/orders/"+itoa(order)+"/refund", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refunded", r.Body["status"])
	require.Equal(t, 1, s.pspRefunds())
	require.Empty(t, refundFailures(t, org))
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestRefundPendingWaitsForItsOwnCharge: an order whose charge is being
// given back (refund_pending) records which charge that is. With two
// charged pages on one order (a declined card left the first open, the
// fan checked out again), the refund of the other charge does not finish
// it: only the refund of the charge it names does.
func TestRefundPendingWaitsForItsOwnCharge(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana-two@example.com")
	_, order := s.hold(t, ana, "h", s.seats[0])
	first := s.checkout(t, ana, order)
	s.decline(t, first) // the page stays open
	r := ana.do(http.MethodPost, "/api/orders/"+itoa(order)+"/checkout", nil)
	require.Less(t, r.Status, 300, string(r.Raw))
	var second psp.Payment
	waitUntil(t, 10*time.Second, func() bool { second = s.payment(t, order); return second.ID != first.ID }, "a second page")
	s.stopWorkers() // refunds wait in the outbox
	s.catalog(t, `UPDATE events SET status = 'cancelled' WHERE id = $1`)

	_, err := s.sim.Pay(first.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, order).Body["status"] == "refund_pending" }, "the first charge given back")
	_, err = s.sim.Pay(second.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND status = 'succeeded'`, order) == 2
	}, "the second charge applied")
	// The second charge comes back first (its refund, or the dashboard's).
	_, err = s.sim.RefundAtPSP(second.ID)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND status = 'refunded'`, order) == 1
	}, "the second charge's refund applied")
	require.Equal(t, "refund_pending", s.orderStatus(t, ana, order).Body["status"], "the first charge is still owed")
	require.EqualValues(t, 1, s.count(t, `SELECT count(*) FROM orders o JOIN payments p ON p.id = o.payment_id
		WHERE o.id = $1 AND p.psp_payment_id = $2`, order, first.ID), "the order names the charge it gives back")

	_, err = s.app.Orders.Fulfil(context.Background()) // the outbox refunds both
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, order).Body["status"] == "refunded" }, "the first charge's refund to finish it")
	require.True(t, s.givenBack(first.ID))
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestPendingRefundThatFailsIsSetAside: the PSP accepts a console refund
// as pending (the order reads refund_pending), then the refund fails at
// the bank (refund.failed, charge.refund.updated). The order stays
// refund_pending, the failure is in the organizer's refund failures and
// counted; the retry asks under a new idempotency key (the PSP would
// answer the failed refund's key with its old pending answer), and once
// that refund succeeds the order reads refunded.
func TestPendingRefundThatFailsIsSetAside(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{RefundsPending: true})
	org := s.organizerOf(t)
	ana, order, _ := s.paidOrder(t, "ana-pending@example.com", s.seats[0])
	refund := "/api/orders/" + itoa(order) + "/refund"

	r := org.do(http.MethodPost, refund, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refund_pending", r.Body["status"])
	pending := s.sim.PendingRefunds()
	require.Len(t, pending, 1)
	require.NoError(t, s.sim.SettleRefund(pending[0], false))
	waitUntil(t, 10*time.Second, func() bool { return len(refundFailures(t, org)) == 1 }, "the failed refund set aside")
	f := refundFailures(t, org)[0].(map[string]any)
	require.EqualValues(t, order, f["order_id"])
	require.Equal(t, "failed", f["status"])
	require.Contains(t, f["failure"], "expired_or_canceled_card")
	require.Equal(t, "refund_pending", s.orderStatus(t, ana, order).Body["status"], "the money is still owed")
	require.Equal(t, 1.0, s.metric(metrics.RefundsFailed))

	r = org.do(http.MethodPost, refund, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refund_pending", r.Body["status"])
	keys := s.keys()
	require.Len(t, keys, 2)
	require.NotEqual(t, keys[0], keys[1], "a failed refund's key is not asked again")
	pending = s.sim.PendingRefunds()
	require.Len(t, pending, 1)
	require.NoError(t, s.sim.SettleRefund(pending[0], true))
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, order).Body["status"] == "refunded" }, "the refund to finish the order")
	require.Empty(t, refundFailures(t, org))
	require.Equal(t, 1, s.pspRefunds())
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestRefundKeysNeverReuseARefusal: the console's refunds and a
// cancellation's share one key scheme: after a refusal, by either, the
// next attempt asks under a new idempotency key (the PSP replays a
// refusal under its key forever).
func TestRefundKeysNeverReuseARefusal(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ana, order, _ := s.paidOrder(t, "ana-keys@example.com", s.seats[0])
	refund := "/api/orders/" + itoa(order) + "/refund"

	// The console's refund is refused (another amount than charged).
	s.exec(t, order, `UPDATE orders SET total_cents = total_cents + 1 WHERE id = $1`)
	requireProblem(t, org.do(http.MethodPost, refund, nil), http.StatusConflict, "refund-refused")
	s.exec(t, order, `UPDATE orders SET total_cents = total_cents - 1 WHERE id = $1`)
	// The cancellation's refund is refused too.
	s.exec(t, order, `UPDATE payments SET amount_cents = amount_cents + 1 WHERE order_id = $1`)
	s.cancelEvent(t, org)
	s.waitRefunds(t, org, 1, 0, 1, 0, nil)
	s.exec(t, order, `UPDATE payments SET amount_cents = amount_cents - 1 WHERE order_id = $1`)

	r := org.do(http.MethodPost, refund, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refunded", r.Body["status"])
	keys := s.keys()
	require.Len(t, keys, 3)
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(keys))), 3, "every attempt after a refusal asks under a new key: %v", keys)
	require.Equal(t, "refunded", s.orderStatus(t, ana, order).Body["status"])
	require.Equal(t, 1, s.pspRefunds())
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestRefusedLatePaymentRefundIsSetAside: a charge paid after its hold
// ended, whose places cannot be taken again, is given back through the
// outbox; the PSP refuses that refund. The order stays refund_pending
// (never refunded), the refusal is among the organizer's refund failures
// and counted; the console's retry, under a new key, refunds it.
func TestRefusedLatePaymentRefundIsSetAside(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ana := newFan(t, s.srv)
	ana.signUp("ana-late-refused@example.com")
	hold, order := s.hold(t, ana, "h", s.seats[0])
	p := s.checkout(t, ana, order)
	s.stopWorkers() // the refund waits in the outbox; the page is not expired
	r := ana.do(http.MethodDelete, "/api/holds/"+itoa(hold), nil)
	require.Less(t, r.Status, 300, string(r.Raw))
	s.paidOrder(t, "bia-late-refused@example.com", s.seats[0]) // the place goes to someone else

	_, err := s.sim.Pay(p.ID, pspsim.CardSuccess) // the late charge
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, order).Body["status"] == "refund_pending" }, "the late charge given back")
	// The PSP refuses the refund (another amount than it charged).
	s.exec(t, order, `UPDATE outbox SET payload = jsonb_set(payload, '{amount}', to_jsonb((payload->>'amount')::bigint + 1))
		WHERE topic = 'refund.requested' AND processed_at IS NULL AND (payload->>'order_id')::bigint = $1`)
	_, err = s.app.Orders.Fulfil(context.Background())
	require.NoError(t, err)

	require.Equal(t, "refund_pending", s.orderStatus(t, ana, order).Body["status"], "a refused refund is not a refund")
	failures := refundFailures(t, org)
	require.Len(t, failures, 1)
	f := failures[0].(map[string]any)
	require.EqualValues(t, order, f["order_id"])
	require.Equal(t, "refused", f["status"])
	require.Equal(t, "refund_pending", f["order_status"])
	require.Contains(t, f["failure"], "greater than unrefunded amount on charge")
	require.Equal(t, 1.0, s.metric(metrics.RefundsFailed))
	require.False(t, s.givenBack(p.ID))

	// Asked again by a client that always sends Content-Type (an empty
	// body is no body: the whole order, as without the header).
	r = org.send(http.MethodPost, "/api/orders/"+itoa(order)+"/refund", "application/json", "")
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "refunded", r.Body["status"])
	require.True(t, s.givenBack(p.ID))
	require.Empty(t, refundFailures(t, org))
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}
