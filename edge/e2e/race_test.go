package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
)

// Two fans, one seat. Ana picks it with the keyboard only (section, row
// and seat lists), Bruno on the map; Ana holds first. Ana goes to checkout
// with no alarm about her own seat; Bruno is told which seat went, the map
// shows him where, and the hold button waits for a new choice.
func TestTwoFansOneSeat(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "One Seat Left", false, 480)
	book := fmt.Sprintf("/events/%d/book", id)
	ana := s.tab(t)
	bruno := s.tabOf(t, s.newBrowser(t))
	s.signUp(t, ana, book)
	// Bruno's page must not hear of Ana's hold before he presses his
	// button, as when both press at the same moment: no live stream, and
	// no snapshot after the first.
	deaf := func(paths ...string) {
		blocked := []*network.BlockPattern{}
		for _, p := range paths {
			blocked = append(blocked, &network.BlockPattern{URLPattern: "*://*:*/api/events/*/" + p, Block: true})
		}
		_, err := chromedp.Call(bruno, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: blocked})
		require.NoError(t, err)
	}
	_, err := chromedp.Call(bruno, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	deaf("stream")
	s.signUp(t, bruno, book)

	// Ana: Tab to the section list, arrow to the first section; the row
	// list picks its first row with free seats; Tab to the first seat,
	// arrows down a row and right a seat, Space to take it.
	require.NoError(t, chromedp.Do(ana,
		chromedp.WaitVisible(`//p[contains(., "Live")]`),
		chromedp.Focus(chromedp.CSS(`#pick-s`)),
		chromedp.KeyEvent(kb.ArrowDown),
		chromedp.WaitVisible(chromedp.CSS(`.seat-list input`)),
		chromedp.KeyEvent("\t"), // the row list
		chromedp.KeyEvent("\t"), // the first seat
		chromedp.KeyEvent(kb.ArrowDown),
		chromedp.KeyEvent(kb.ArrowRight),
		chromedp.KeyEvent(" "),
		chromedp.WaitVisible(`//button[starts-with(., "Hold 1 seat")]`),
	))
	require.Equal(t, "101", evaluate[string](t, ana, `document.querySelector('#pick-s').value`))
	require.True(t, evaluate[bool](t, ana, `document.activeElement.matches('.seat-list input:checked')`), "focus stays on the seat")
	seat := evaluate[string](t, ana, `document.querySelector('.seat-list input:checked').value`)
	label := evaluate[string](t, ana, `document.querySelector('.chosen li').textContent.split(' — ')[0]`)
	require.Equal(t, "Section 101 · Row B · Seat 2", label)

	// Bruno: the same seat, on the map.
	require.NoError(t, chromedp.Do(bruno,
		chromedp.WaitVisible(`//p[contains(., "Live updates every 2 seconds")]`),
		chromedp.Click(chromedp.CSS(`g[data-section="101"] polygon`)),
		chromedp.WaitVisible(chromedp.CSS(`circle.seat[data-i="`+seat+`"]`)),
		chromedp.Click(chromedp.CSS(`circle.seat[data-i="`+seat+`"]`)),
		chromedp.WaitVisible(`//button[starts-with(., "Hold 1 seat")]`),
	))
	deaf("stream", "availability")

	// Ana holds first, from the keyboard. Everything her page flashes as
	// an alert or a notice on the way to checkout is recorded: the live
	// update of her own hold may arrive before the hold's answer.
	evaluate[bool](t, ana, `(() => { window.alarms = []; new MutationObserver(() => document.querySelectorAll('[role=alert]:not([hidden]), #toast.show')
		.forEach((e) => alarms.push(e.textContent))).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true }); return true; })()`)
	// Her hold's answer is held back until the live update of her own hold
	// has reached the page, as happens in most real holds.
	paused := make(chan fetch.RequestID, 1)
	go func() {
		for ev, err := range chromedp.Events(ana, fetch.RequestPaused) {
			if err == nil {
				paused <- ev.RequestID
			}
			return
		}
	}()
	_, err = chromedp.Call(ana, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{
		{URLPattern: "*/api/events/*/holds", RequestStage: fetch.RequestStageResponse}}})
	require.NoError(t, err)
	free := text(t, ana, "#pick-r")
	require.NoError(t, chromedp.Do(ana,
		chromedp.Focus(chromedp.CSS(`.actionbar button`)),
		chromedp.KeyEvent("\r"),
	))
	held := <-paused
	changed, err := chromedp.Run(ana, chromedp.Poll[bool](fmt.Sprintf(`document.querySelector('#pick-r').textContent !== %q`, free), chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	require.True(t, changed, "the live update of Ana's hold reached her page")
	_, err = chromedp.Call(ana, fetch.ContinueResponse, fetch.ContinueResponseParams{RequestID: held})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ana, chromedp.WaitVisible(`//p[contains(@class,"countdown")]`)))
	require.NotContains(t, evaluate[string](t, ana, `alarms.join(' | ')`), "taken", "the winner hears nothing about her own seat")
	require.NotContains(t, text(t, ana, "main"), "taken")
	require.Contains(t, text(t, ana, ".items"), label)

	// Bruno loses: the seat is named, the map is around it, nothing is
	// left to hold.
	require.NoError(t, chromedp.Do(bruno,
		chromedp.Click(`//button[starts-with(., "Hold 1 seat")]`),
		chromedp.WaitVisible(`//p[@role="alert" and contains(., "taken by another fan a moment before you")]`),
	))
	require.Contains(t, text(t, bruno, `.actionbar [role=alert]`), label)
	require.Equal(t, "Hold selected seats", text(t, bruno, ".actionbar button"))
	require.True(t, evaluate[bool](t, bruno, `document.querySelector('.actionbar button').disabled`))
	shown := evaluate[bool](t, bruno, `(() => { const m = document.querySelector('svg.seatmap').getBoundingClientRect();
		const r = document.querySelector('circle.seat[data-i="`+seat+`"]').getBoundingClientRect();
		return r.width >= 12 && r.left >= m.left && r.right <= m.right && r.top >= m.top && r.bottom <= m.bottom; })()`)
	require.True(t, shown, "the map shows the lost seat, big enough to click")
	require.True(t, evaluate[bool](t, bruno, `document.querySelector('circle.seat[data-i="`+seat+`"]').classList.contains('taken')`))
	s.shot(t, bruno, "race-loser")
}

// Best available says what it may cost before the hold; a declined card
// is explained on the payment page and back at the shop, with what to do.
func TestDeclinedCard(t *testing.T) {
	s, ctx := booking(t, "Declined", 480)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[@id="best-range" and contains(., "from R$180.00 to R$450.00")]`)))
	require.True(t, evaluate[bool](t, ctx, `(() => { const s = document.querySelector('#best-s'); s.value = '101'; return s.dispatchEvent(new Event('change')); })()`))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//p[@id="best-range" and . = "Each ticket costs R$450.00."]`),
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(`//p[contains(@class,"countdown")]`),
		chromedp.Click(`//button[. = "Pay now"]`),
		chromedp.WaitVisible(chromedp.CSS(`#card`)),
		chromedp.SendKeys(chromedp.CSS(`#card`), "4000 0000 0000 0002"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(`//p[@role="alert" and contains(., "declined")]`),
	))
	require.Contains(t, text(t, ctx, "[role=alert]"), "Nothing was charged")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[. = "go back to the shop"]`),
		chromedp.WaitVisible(`//p[contains(., "Your bank declined the card.")]`),
	))
	msg := text(t, ctx, "main")
	require.Contains(t, msg, "Nothing was charged. Press “Pay now” to try again with another card; your seats stay held until")
	require.NotContains(t, msg, "card_declined")
	s.shot(t, ctx, "declined")
}
