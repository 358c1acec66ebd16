package shardstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/shardstore"
)

// TestRefundProgressIsOneRowAndExact: a cancelled event with thousands of
// orders on a shard with ten times more (other events') orders and outbox
// messages and counters. The progress the console polls reads one row by its key, and
// the count before any cancellation reads only the event's orders (no Seq
// Scan in either plan); the numbers match a count of the rows through
// refunds, failures, a refund of a failed one and a retry.
func TestRefundProgressIsOneRowAndExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, st := freshShard(t)
	const event, size = 7, 2000
	// Event 7's orders are every 12th: size of them; 1 in 20 refunded
	// before the cancellation, 1 in 10 never paid.
	_, err := pool.Exec(ctx, `
		WITH h AS (
			INSERT INTO holds (event_id, account_id, status, expires_at, idempotency_key, request_hash)
			SELECT CASE WHEN i % 12 = 0 THEN $1 ELSE 100 + i % 9 END, i, 'converted', now(), 'h' || i, '\x00'
			FROM generate_series(1, 12 * $2) i RETURNING id, event_id, account_id
		), o AS (
			INSERT INTO orders (event_id, user_id, hold_id, status, ticket_count, total_cents, currency)
			SELECT event_id, account_id, id,
			  CASE WHEN account_id % 200 = 0 THEN 'refunded' WHEN account_id % 120 = 60 THEN 'pending' ELSE 'paid' END,
			  1, 1000, 'BRL' FROM h RETURNING id, status
		)
		INSERT INTO payments (order_id, psp_payment_id, idempotency_key, status, amount_cents, currency)
		SELECT id, 'pi_' || id, 'k' || id, 'succeeded', 1000, 'BRL' FROM o WHERE status <> 'pending'`, event, size)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE orders o SET payment_id = p.id FROM payments p WHERE p.order_id = o.id`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO outbox (topic, payload, processed_at)
		SELECT 'refund.requested', jsonb_build_object('order_id', i, 'payment', 'pi_x' || i), now() FROM generate_series(1, 10 * $1) i`, size)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO cancel_refund_counts SELECT 1000 + i, 10, 5, 1 FROM generate_series(1, $1) i`, size)
	require.NoError(t, err) // other events cancelled before
	_, err = pool.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	// truth counts the rows the counters stand for.
	truth := func() shardstore.RefundCounts {
		var c shardstore.RefundCounts
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE o.status = 'refunded'),
			count(*) FILTER (WHERE c.status = 'failed' AND o.status = 'paid')
			FROM orders o LEFT JOIN cancel_refunds c ON c.order_id = o.id
			WHERE o.event_id = $1 AND o.payment_id IS NOT NULL`, event).Scan(&c.Total, &c.Refunded, &c.Failed))
		return c
	}
	progress := func(when string) {
		t.Helper()
		got, err := st.EventRefunds(ctx, event)
		require.NoError(t, err)
		require.Equal(t, truth(), got, when)
	}
	requirePlan := func(sql, uses string, args ...any) {
		t.Helper()
		rows, err := pool.Query(ctx, "EXPLAIN "+sql, append([]any{event}, args...)...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		text := strings.Join(plan, "\n")
		require.NotContains(t, text, "Seq Scan", text)
		require.Contains(t, text, uses, text)
	}

	progress("before the cancellation")
	require.Greater(t, truth().Refunded, 0)
	requirePlan(shardstore.PaidOrdersSQL, "orders_event")

	asked, err := st.RequestEventRefunds(ctx, event, "event cancelled")
	require.NoError(t, err)
	require.Equal(t, truth().Total-truth().Refunded, asked, "one refund per paid order")
	progress("refunds asked")
	requirePlan(shardstore.RefundCountsSQL, "cancel_refund_counts_pkey")

	var paid []struct{ order, payment int64 }
	rows, err := pool.Query(ctx, `SELECT id, payment_id FROM orders WHERE event_id = $1 AND status = 'paid' ORDER BY id LIMIT 30`, event)
	require.NoError(t, err)
	for rows.Next() {
		var p struct{ order, payment int64 }
		require.NoError(t, rows.Scan(&p.order, &p.payment))
		paid = append(paid, p)
	}
	require.NoError(t, rows.Err())
	require.Len(t, paid, 30)
	tx := func(fn func(tx shardstore.Tx) error) { require.NoError(t, st.WithTx(ctx, fn)) }
	tx(func(tx shardstore.Tx) error {
		for _, p := range paid[:10] {
			if ok, err := tx.RefundPaid(ctx, p.order, p.payment); err != nil || !ok {
				return err
			}
		}
		for _, p := range paid[10:20] {
			if ok, err := tx.RefundFailed(ctx, p.order, 1, "refused"); err != nil || !ok {
				return err
			}
		}
		return nil
	})
	progress("ten refunded, ten failed")
	require.Equal(t, 10, truth().Failed)
	failed, err := st.FailedRefunds(ctx, event, 3)
	require.NoError(t, err)
	require.Len(t, failed, 3, "as many as asked")
	for i, f := range failed {
		require.Equal(t, paid[10+i].order, f.OrderID, "by order id")
		require.Equal(t, "refused", f.Failure)
		require.Equal(t, 1, f.Tries)
		require.EqualValues(t, 1000, f.AmountCents)
	}
	requirePlan(shardstore.FailedRefundsSQL, "cancel_refunds_failed", 100)
	tx(func(tx shardstore.Tx) error {
		ok, err := tx.RefundFailed(ctx, paid[0].order, 1, "late refusal of a refunded order")
		require.False(t, ok)
		if err != nil {
			return err
		}
		ok, err = tx.RefundFailed(ctx, paid[10].order, 1, "the same failure again")
		require.False(t, ok)
		if err != nil {
			return err
		}
		_, err = tx.RefundPaid(ctx, paid[11].order, paid[11].payment) // refunded at the PSP after all
		return err
	})
	progress("a failed one refunded after all")
	require.Equal(t, 9, truth().Failed)

	asked, err = st.RequestEventRefunds(ctx, event, "event cancelled")
	require.NoError(t, err)
	require.Equal(t, 9, asked, "asking again asks only the failed ones")
	progress("failed ones asked again")
	require.Zero(t, truth().Failed)
	tx(func(tx shardstore.Tx) error {
		ok, err := tx.RefundFailed(ctx, paid[12].order, 1, "an answer to the first try")
		require.False(t, ok, "a late answer to an earlier try changes nothing")
		if err != nil {
			return err
		}
		ok, err = tx.RefundFailed(ctx, paid[12].order, 2, "refused again")
		require.True(t, ok)
		return err
	})
	progress("the retry failed")
	require.Equal(t, 1, truth().Failed)
}
