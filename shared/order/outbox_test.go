package order_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/syncbuf"
)

// TestFailingMessagesAreSetAside: a message that fails every try (a mail
// for an order the shard does not have) is tried OutboxTries times, then
// set aside: never tried again, counted, logged as an error carrying the
// OutboxDead metric; an operator's redrive makes it due again.
func TestFailingMessagesAreSetAside(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	ctx := context.Background()
	var logs syncbuf.Buffer
	const tries = 3
	orders := order.New(order.Config{Shards: a.Shards, Log: slog.New(slog.NewJSONHandler(&logs, nil)), OutboxTries: tries})
	db, err := a.Shards.Pool(1)
	require.NoError(t, err)
	var id int64
	require.NoError(t, db.QueryRow(ctx, `INSERT INTO outbox (topic, payload) VALUES ('order.paid', '{"order_id": 424242}') RETURNING id`).Scan(&id))
	due := func() {
		t.Helper()
		_, err := db.Exec(ctx, `UPDATE outbox SET retry_at = now() WHERE id = $1`, id)
		require.NoError(t, err)
	}

	for range tries {
		_, err := orders.Fulfil(ctx)
		require.ErrorContains(t, err, fmt.Sprintf("outbox %d (order.paid)", id))
		due() // no waiting out the backoff
	}
	_, err = orders.Fulfil(ctx)
	require.NoError(t, err, "a message out of tries is not tried again")
	var attempts int
	var dead bool
	require.NoError(t, db.QueryRow(ctx, `SELECT attempts, dead_at IS NOT NULL FROM outbox WHERE id = $1`, id).Scan(&attempts, &dead))
	require.Equal(t, tries, attempts)
	require.True(t, dead)
	n, err := orders.DeadMessages(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Contains(t, logs.String(), `"level":"ERROR","msg":"outbox message dead"`)
	require.Contains(t, logs.String(), fmt.Sprintf(`"message":%d,"topic":"order.paid","tries":%d`, id, tries))
	require.Contains(t, logs.String(), `"`+metrics.OutboxDead+`":1`)

	// The redrive of docs/payments.md.
	_, err = db.Exec(ctx, `UPDATE outbox SET dead_at = NULL, attempts = 0, retry_at = NULL WHERE id = $1`, id)
	require.NoError(t, err)
	_, err = orders.Fulfil(ctx)
	require.ErrorContains(t, err, fmt.Sprintf("outbox %d", id), "a redriven message is tried again")
}
