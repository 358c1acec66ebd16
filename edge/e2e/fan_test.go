package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// payButton is the checkout's button to the PSP's page, first time or again.
const payButton = `//button[contains(., "Pay now") or contains(., "Continue to payment")]`

// within polls a JavaScript condition until it holds. Unlike
// chromedp.Poll it evaluates in whatever document the tab shows now, as
// one restored from the back-forward cache.
func within(t *testing.T, ctx context.Context, expr string, d time.Duration, msg string) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(200 * time.Millisecond) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
		require.True(t, time.Now().Before(deadline), msg)
	}
}

// TestBackFromPaymentCanPayAgain: a fan who backs out of the PSP's page
// finds the checkout as it is now (the browser restores it from the
// back-forward cache as it was left, its button pressed), can pay again.
func TestBackFromPaymentCanPayAgain(t *testing.T) {
	_, ctx := booking(t, "Second Thoughts", 480)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//button[. = "Find best seats"]`),
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(payButton),
		chromedp.Click(payButton),
		chromedp.WaitVisible(chromedp.CSS(`#card`)),
	))
	// The browser's Back. chromedp's own waits lose the page once it is
	// restored from the back-forward cache (no load event, no new
	// document), so the page is read with JavaScript until it moves on.
	evaluate[bool](t, ctx, `history.back(), true`)
	within(t, ctx, `(() => { const b = [...document.querySelectorAll('.actions button')].find((b) => /Pay now|Continue to payment/.test(b.textContent));
		return location.pathname.startsWith('/orders/') && !!b && !b.disabled && (b.click(), true); })()`,
		15*time.Second, "the pay button works again after Back")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#card`)),
		chromedp.SendKeys(chromedp.CSS(`#card`), "4242 4242 4242 4242"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(`//h1[. = "Your tickets"]`),
	))
}
