package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/demo"
)

// The payment provider refuses one refund of a cancelled event: the
// console counts it failed, lists the order with its buyer and the
// provider's reason, and its "Ask again" button refunds it once the cause
// is gone.
func TestCancelledEventAsksFailedRefundsAgain(t *testing.T) {
	s := newSite(t)
	ctx := s.tab(t)
	eventID := s.event(t, "Show Cancelado", false, 600)
	paid, err := demo.Sell(context.Background(), s.st.URL, eventID, 2)
	require.NoError(t, err)
	require.Equal(t, 2, paid)
	// The PSP refuses to refund another amount than it charged.
	const refused = `UPDATE payments SET amount_cents = amount_cents + $2 WHERE order_id =
		(SELECT min(id) FROM orders WHERE event_id = $1 AND status = 'paid')`
	shard, err := s.st.App.Shards.ForEvent(context.Background(), eventID)
	require.NoError(t, err)
	_, err = shard.Exec(context.Background(), refused, eventID, 1)
	require.NoError(t, err)

	s.logInOrganizer(t, ctx, fmt.Sprintf("/organizer/events/%d", eventID))
	evaluate[bool](t, ctx, `(window.confirm = () => true, true)`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Cancel event…"]`),
		chromedp.WaitVisible(`//p[@id = "refund-label" and contains(., "1 of 2 orders refunded, 0 left")]`),
		chromedp.WaitVisible(`//p[contains(@class, "error") and contains(., "1 refunds failed")]`),
		chromedp.WaitVisible(`//ul[@id = "refund-failures"]/li[contains(., "greater than unrefunded amount on charge") and contains(., "asked 1×")]/span/a[starts-with(@href, "/organizer/orders/")]`),
		chromedp.WaitVisible(`//button[. = "Ask again"]`),
	))
	accessible(t, ctx, "failed refunds")

	_, err = shard.Exec(context.Background(), refused, eventID, -1)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Ask again"]`),
		chromedp.WaitVisible(`//p[@id = "refund-label" and contains(., "2 of 2 orders refunded, 0 left")]`),
		chromedp.WaitNotVisible(`//button[. = "Ask again"]`),
		chromedp.WaitNotVisible(`//ul[@id = "refund-failures"]`),
	))
}
