package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/testenv"
)

// TestConsumesSQSBatchUnderEmulator invokes the built consumer with a
// real-shaped SQS event: the good job creates the PSP payment, the job of
// an unknown payment is reported as a batch item failure.
func TestConsumesSQSBatchUnderEmulator(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 1))
	sim := pspsim.New(pspsim.Config{APIKey: cfg.PSPAPIKey, Secret: "whsec_s", PublicURL: "http://psp.invalid"})
	simSrv := httptest.NewServer(sim)
	t.Cleanup(simSrv.Close)
	cfg.PSPURL = simSrv.URL
	a, err := app.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(a.Close)

	org := organizer.New(a.Catalog, a.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Queue Arena", "Natal", 50, 5))
	require.NoError(t, err)
	now := time.Now()
	e, err := org.CreateEvent(ctx, 0, organizer.EventSpec{VenueID: l.VenueID, LayoutVersion: l.Version, Name: "Q",
		StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(47 * time.Hour),
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 10}, {Code: "B", PriceCents: 10}, {Code: "C", PriceCents: 10}, {Code: "GA", PriceCents: 10}}})
	require.NoError(t, err)
	require.NoError(t, org.SetStatus(ctx, e.ID, "on_sale"))
	e.Status = "on_sale"
	h, _, err := a.Inventory.Hold(ctx, e, inventory.Request{Account: 1, Key: "k", Pool: "FLOOR", Quantity: 1})
	require.NoError(t, err)
	pool, _ := a.Shards.Pool(e.Shard)
	var paymentID int64
	require.NoError(t, pool.QueryRow(ctx, `INSERT INTO payments (order_id, idempotency_key, status, amount_cents, currency)
		VALUES ($1::bigint, 'order-' || $1::bigint || '-1', 'queued', 10, 'BRL') RETURNING id`, h.OrderID).Scan(&paymentID))

	fn, _ := lambdatest.StartFunction(t, "pspqueue", cfg, nil)
	good, _ := json.Marshal(order.Job{OrderID: h.OrderID, PaymentID: paymentID})
	bad, _ := json.Marshal(order.Job{OrderID: h.OrderID, PaymentID: 999999})
	var res events.SQSEventResponse
	fn.Invoke(t, events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: string(good), EventSource: "aws:sqs", Attributes: map[string]string{"MessageGroupId": "1"}},
		{MessageId: "m2", Body: string(bad), EventSource: "aws:sqs"},
	}}, &res)
	require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: "m2"}}, res.BatchItemFailures)
	var status string
	require.NoError(t, pool.QueryRow(ctx, `SELECT status FROM payments WHERE id = $1`, paymentID).Scan(&status))
	require.Equal(t, "requires_action", status)
	require.Equal(t, 1, sim.Stats().Payments)
}
