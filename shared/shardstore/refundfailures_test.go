package shardstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
)

// TestRefundFailuresAreTheOrdersOwn: a paid order whose extra charge (a
// second attempt charged after it was paid) could not be given back is not
// listed among the refund failures: the console's retry refunds the charge
// that paid the order, which would void good tickets while the extra
// charge stays owed. A failed refund of the paying charge is listed.
func TestRefundFailuresAreTheOrdersOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, st, h := oneSeatHeld(t)
	var paying, extra int64
	for i, id := range []*int64{&paying, &extra} {
		require.NoError(t, pool.QueryRow(ctx, `INSERT INTO payments (order_id, psp_payment_id, idempotency_key, status, amount_cents, currency, attempt)
			VALUES ($1, $2, $3, 'succeeded', 100, 'brl', $4) RETURNING id`,
			h.OrderID, []string{"cs_paying", "cs_extra"}[i], []string{"k-1", "k-2"}[i], i+1).Scan(id))
	}
	_, err := pool.Exec(ctx, `UPDATE orders SET status = 'paid', payment_id = $2 WHERE id = $1`, h.OrderID, paying)
	require.NoError(t, err)
	failed := func(payment string) {
		t.Helper()
		require.NoError(t, st.WithTx(ctx, func(tx shardstore.Tx) error {
			return tx.RecordRefund(ctx, shardstore.RefundAttempt{OrderID: h.OrderID, Payment: payment, Status: shardstore.RefundUnanswered, Failure: "no answer"})
		}))
	}
	events := []int64{hold(1, "k").EventID}

	failed("cs_extra")
	got, err := st.RefundFailures(ctx, events, 10)
	require.NoError(t, err)
	require.Empty(t, got, "the extra charge's refund is not the order's")

	failed("cs_paying")
	got, err = st.RefundFailures(ctx, events, 10)
	require.NoError(t, err)
	require.Len(t, got, 1, "the paying charge's refund failed")
	require.Equal(t, h.OrderID, got[0].OrderID)
}
