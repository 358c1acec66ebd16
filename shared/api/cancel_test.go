package api_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

// cancelEvent cancels the shop's event (again: the refunds that failed are
// asked again).
func (s *shop) cancelEvent(t testing.TB, org *fan) {
	t.Helper()
	r := org.do(http.MethodPut, "/api/events/"+itoa(s.eventID)+"/status", map[string]any{"status": "cancelled"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
}

// waitRefunds waits until the event's refund progress counts total,
// refunded, failed and remaining, and returns it.
func (s *shop) waitRefunds(t testing.TB, org *fan, total, refunded, failed, remaining float64, tick func()) map[string]any {
	t.Helper()
	want := map[string]any{"total": total, "refunded": refunded, "failed": failed, "remaining": remaining}
	var got map[string]any
	waitUntil(t, 30*time.Second, func() bool {
		if tick != nil {
			tick()
		}
		got = org.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/refunds", nil).Body
		counts := maps.Clone(got)
		delete(counts, "failures")
		return fmt.Sprint(counts) == fmt.Sprint(want)
	}, "refund progress %v (last %v)", want, &got)
	return got
}

// TestCancelShowsRefusedRefundsAsFailed: the PSP refuses one refund of a
// cancelled event; the console counts it failed as soon as the worker
// has the answer (not two minutes later), the order stays paid, and
// cancelling again asks again and refunds it.
func TestCancelShowsRefusedRefundsAsFailed(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	s.paidOrder(t, "ana-refused@example.com", s.seats[0])
	s.paidOrder(t, "bia-refused@example.com", s.seats[1])
	cai, caiOrder, _ := s.paidOrder(t, "cai-refused@example.com", s.seats[2])
	// The PSP refuses a refund of another amount than it charged.
	s.exec(t, caiOrder, `UPDATE payments SET amount_cents = amount_cents + 1 WHERE order_id = $1`)
	org := s.organizerOf(t)

	s.cancelEvent(t, org)
	p := s.waitRefunds(t, org, 3, 2, 1, 0, nil)
	require.Equal(t, "paid", s.orderStatus(t, cai, caiOrder).Body["status"], "a refused refund changes nothing")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM cancel_refunds WHERE order_id = $1 AND status = 'failed' AND failure LIKE '%greater than unrefunded amount on charge%'`, caiOrder))
	// The organizer is told which order failed, whose it is and why.
	require.Len(t, p["failures"], 1, "%v", p)
	f := p["failures"].([]any)[0].(map[string]any)
	require.EqualValues(t, caiOrder, f["order_id"])
	require.Equal(t, "cai-refused@example.com", f["buyer"].(map[string]any)["email"])
	require.Contains(t, f["failure"], "greater than unrefunded amount on charge")
	require.EqualValues(t, 1, f["tries"])
	require.Positive(t, f["amount_cents"])
	require.NotEmpty(t, f["failed_at"])

	s.exec(t, caiOrder, `UPDATE payments SET amount_cents = amount_cents - 1 WHERE order_id = $1`)
	s.cancelEvent(t, org)
	require.NotContains(t, s.waitRefunds(t, org, 3, 3, 0, 0, nil), "failures")
	require.Equal(t, "refunded", s.orderStatus(t, cai, caiOrder).Body["status"])
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestCancelRefundsWaitOutAnUnansweringPSP: while the PSP does not
// answer, the refund stays on its way and the worker retries it, backing
// off; once its tries are spent (the retries are made due at once here)
// it is failed, and asking again after the PSP is back refunds it.
func TestCancelRefundsWaitOutAnUnansweringPSP(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, order, _ := s.paidOrder(t, "ana-outage@example.com", s.seats[0])
	org := s.organizerOf(t)
	s.sim.SetFaults(pspsim.Faults{Outage: true, RetryBase: 50 * time.Millisecond})

	s.cancelEvent(t, org)
	tries := func() int {
		return s.count(t, `SELECT coalesce(max(attempts), 0) FROM outbox WHERE (payload->>'order_id')::bigint = $1`, order)
	}
	waitUntil(t, 20*time.Second, func() bool { return tries() >= 2 }, "the worker to retry")
	s.waitRefunds(t, org, 1, 0, 0, 1, nil)
	due := func() {
		s.exec(t, order, `UPDATE outbox SET retry_at = now() WHERE processed_at IS NULL AND (payload->>'order_id')::bigint = $1`)
	}
	s.waitRefunds(t, org, 1, 0, 1, 0, due)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM cancel_refunds WHERE order_id = $1 AND failure LIKE 'no answer from the payment provider after 10 tries%'`, order))
	require.Equal(t, "paid", s.orderStatus(t, ana, order).Body["status"])

	s.sim.SetFaults(pspsim.Faults{RetryBase: 50 * time.Millisecond})
	s.cancelEvent(t, org)
	s.waitRefunds(t, org, 1, 1, 0, 0, nil)
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestPaymentsRacingTheCancelAreRefunded: many fans pay at once while the
// organizer cancels the event. Each payment either sold before the
// cancellation took the event's money lock (and is refunded with the
// others) or saw the event cancelled (and is given back): no order of the
// cancelled event stays paid.
func TestPaymentsRacingTheCancelAreRefunded(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	const fans = 80
	payments := make([]psp.Payment, fans)
	for i := range payments {
		f := newFan(t, s.srv)
		f.signUp(fmt.Sprintf("racer%d@example.com", i))
		_, order := s.hold(t, f, "h", s.seats[i])
		payments[i] = s.checkout(t, f, order)
	}
	org := s.organizerOf(t)

	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, p := range payments {
		wg.Go(func() {
			<-start
			_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
			require.NoError(t, err)
		})
	}
	close(start)
	waitUntil(t, 20*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM orders WHERE status = 'paid'`) >= fans/4
	}, "a quarter of the orders to be paid")
	s.cancelEvent(t, org)
	wg.Wait()

	deadline := time.Now().Add(30 * time.Second)
	for {
		paid := s.count(t, `SELECT count(*) FROM orders WHERE status = 'paid'`)
		pending := s.count(t, `SELECT count(*) FROM orders WHERE status = 'pending'`)
		queued := s.count(t, `SELECT count(*) FROM outbox WHERE processed_at IS NULL`)
		if paid+pending+queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled event still has %d paid orders (%d pending, %d outbox messages to go)", paid, pending, queued)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range payments {
		require.True(t, s.givenBack(p.ID), "payment %s given back", p.ID)
	}
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestReconcileFinishesACancellationItsShardMissed: the catalog committed
// a cancellation but the process died before the shard asked the refunds
// (here: the status is set in the catalog alone). The reconciler asks
// them, once: a second run asks nothing more of the PSP.
func TestReconcileFinishesACancellationItsShardMissed(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	s.paidOrder(t, "ana-crash@example.com", s.seats[0])
	s.paidOrder(t, "bia-crash@example.com", s.seats[1])
	org := s.organizerOf(t)
	s.catalog(t, `UPDATE events SET status = 'cancelled' WHERE id = $1`)

	ctx := context.Background()
	_, err := s.app.Orders.Reconcile(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	s.waitRefunds(t, org, 2, 2, 0, 0, nil)
	asked := s.refundCalls.Load()
	_, err = s.app.Orders.Reconcile(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Equal(t, asked, s.refundCalls.Load(), "a cancellation its shard heard of is not asked again")
	s.requireMoneyConserved(t)
}
