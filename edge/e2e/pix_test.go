package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestPixAwaitsTheBank: the fan chooses Pix on the PSP's page, sees its
// code, and goes back to the shop, whose page says the Pix awaits the
// bank's confirmation and until when the seats are held for it; when the
// bank pays, the page shows the tickets by itself.
func TestPixAwaitsTheBank(t *testing.T) {
	s, ctx := booking(t, "Pix Night", 480)
	require.NoError(t, chromedp.Do(ctx,
		bestReady,
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(payButton),
		chromedp.Click(payButton),
		chromedp.WaitVisible(`//button[. = "Pay with Pix"]`),
		chromedp.Click(`//button[. = "Pay with Pix"]`),
		chromedp.WaitVisible(chromedp.CSS(`#pix`)),
	))
	code := evaluate[string](t, ctx, `document.querySelector('#pix').value`)
	require.True(t, strings.HasPrefix(code, "000201"), "a Pix copia e cola: %q", code)
	bank := evaluate[string](t, ctx, `location.href`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[contains(., "Back to the shop")]`),
		chromedp.WaitVisible(`//p[contains(., "Your Pix payment is awaiting confirmation from your bank")]`),
	))
	says := text(t, ctx, `.notice`)
	until := evaluate[string](t, ctx, `(() => { const x = new XMLHttpRequest();
		x.open('GET', '/api/orders/' + location.pathname.split('/').pop(), false); x.send();
		const o = JSON.parse(x.responseText);
		return new Intl.DateTimeFormat('en', { timeStyle: 'short' }).format(new Date(o.hold_expires_at)); })()`)
	require.Contains(t, says, "before "+until, "says until when")
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('.actions button').length`),
		"nothing to pay or release while the bank pays")
	s.shot(t, ctx, "pix-awaiting")
	accessible(t, ctx, "pix awaiting")

	// The fan's bank app pays the code (the simulator's bank, outside the
	// browser): the page, still open, shows the tickets by itself.
	res, err := http.PostForm(bank+"/pix/pay", nil)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	soon, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(soon,
		chromedp.WaitVisible(`//h1[. = "Your tickets"]`),
		chromedp.WaitVisible(chromedp.CSS(`.ticket svg.qr`)),
	))
}
