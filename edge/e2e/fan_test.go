package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/organizer"
)

// payButton is the checkout's button to the PSP's page, first time or again.
const payButton = `//button[contains(., "Pay now") or contains(., "Continue to payment")]`

// mapLive waits until the seat map shows the availability: until then
// (aria-busy) every seat reads as taken.
var mapLive = chromedp.WaitReady(`section.map-wrap[aria-busy="false"]`)

// bestReady waits for the best-available form and the availability that
// moves it (mapLive).
var bestReady chromedp.Action[chromedp.Void] = func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
	return chromedp.Void{}, chromedp.Do(ctx, chromedp.WaitVisible(`//button[. = "Find best seats"]`), mapLive)
}

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
		bestReady,
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

// TestQueuedPaymentPageOpensWhenReady: with the PSP's quota spent, Pay
// says the payment page is being prepared, then opens it once it is
// ready, without a second press.
func TestQueuedPaymentPageOpensWhenReady(t *testing.T) {
	s := newSiteWith(t, func(c *config.Config) { c.PSPRate = 0.1 }) // one PSP call, then one every 12.5 s
	id := s.event(t, "Busy Payments", false, 480)
	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/book", id))
	require.NoError(t, chromedp.Do(ctx,
		mapLive,
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(payButton),
	))
	// Another fan's checkout spends the quota's one call.
	other := newAPIFan(t, s.st.URL)
	h, err := other.HoldBest(context.Background(), id, 1, "")
	require.NoError(t, err)
	_, _, err = other.Checkout(context.Background(), h.OrderID)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(payButton)))
	within(t, ctx, `document.body.textContent.includes('your payment page is being prepared')`, 10*time.Second, "Pay says the page is being prepared")
	opened, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, chromedp.Do(opened, chromedp.WaitVisible(chromedp.CSS(`#card`))), "the payment page opens by itself once ready")
}

// doubleClick presses the mouse twice on the centre of the element a CSS
// selector names, as an eager hand does (chromedp.DoubleClick sends one
// press whose click count is 2: a single click event).
func doubleClick(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	x, y := at(t, ctx, sel)
	require.NoError(t, chromedp.Do(ctx, chromedp.MouseClickXY(x, y), chromedp.MouseClickXY(x, y, chromedp.ClickCount(2))))
}

// TestOwnHoldShowsAfterBack: back from checkout to the map, the fan's held
// seats are theirs (not "not available") and the bar leads back to paying,
// with the hold's time left.
func TestOwnHoldShowsAfterBack(t *testing.T) {
	_, ctx := booking(t, "Change of Mind", 480)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
		chromedp.Click(chromedp.CSS(`g[data-section="101"] polygon`)),
		chromedp.WaitVisible(chromedp.CSS(`g[data-section="101"] circle.seat`)),
		chromedp.Click(chromedp.CSS(`g[data-section="101"] circle.seat:not(.taken)`)),
		chromedp.Click(chromedp.CSS(`g[data-section="101"] circle.seat:not(.taken):not(.selected)`)),
		chromedp.WaitVisible(`//div[@class="actionbar"]//button[contains(., "Hold 2 seats")]`),
	))
	doubleClick(t, ctx, ".actionbar button") // an eager double click: still one hold of 2 seats (the bar says 2 below)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[contains(@class,"countdown")]`)))
	order := evaluate[string](t, ctx, `location.pathname`)
	evaluate[bool](t, ctx, `history.back(), true`) // within the app: no page load
	soon, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(soon,
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
		chromedp.WaitVisible(`//p[contains(@class, "holding") and contains(., "You're holding 2 seats — continue to pay")]`),
	), "the bar leads back to the order")
	require.Regexp(t, `\d+:\d\d left \(until \d{1,2}:\d\d`, text(t, ctx, ".actionbar .holding"), "the hold's countdown in the bar")
	require.Equal(t, "No other seats chosen", text(t, ctx, ".bar-summary"), "the bar does not read as if the hold were lost")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`g[data-section="101"] polygon`)),
		chromedp.WaitVisible(chromedp.CSS(`g[data-section="101"] circle.seat.mine`)),
	))
	require.Equal(t, 2, evaluate[int](t, ctx, `document.querySelectorAll('circle.seat.mine').length`), "the held seats show as the fan's")
	accessible(t, ctx, "booking with a hold")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[. = "continue to pay"]`),
		chromedp.WaitVisible(`//p[contains(@class,"countdown")]`),
	))
	require.Equal(t, order, evaluate[string](t, ctx, `location.pathname`))
}

// TestPhoneTurnEndsInTheBar: on a phone the turn's end is in the sticky
// bar, on screen; once the turn is over Hold stays disabled, saying why
// and how to get another turn.
func TestPhoneTurnEndsInTheBar(t *testing.T) {
	s := newSite(t)
	const turn = 25 // seconds: the test waits for the turn to end
	id := s.eventWith(t, "Short Turn", true, 480, func(e *organizer.EventSpec) {
		e.WaitingRoom.ActiveTTL, e.WaitingRoom.AdmissionTTL = turn, turn
	})
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	require.NoError(t, s.st.WaitForRoom(context.Background(), id))
	asPhone(t, ctx)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/queue", id)), // nobody waits: admitted at once
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
		chromedp.WaitVisible(`//div[@class="actionbar"]/p[contains(@class, "turn") and contains(., "Your turn to buy ends at")]`),
	))
	inView := evaluate[bool](t, ctx, `(() => { const r = document.querySelector('.actionbar .turn').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`)
	require.True(t, inView, "the turn's end is on screen")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//div[@class="actionbar"]/p[contains(., "Your turn to buy has ended")]/a[. = "Join the line again"]`),
	))
	// A seat chosen from the lists after the turn: nothing to hold.
	evaluate[bool](t, ctx, `(() => { const s = document.querySelector('#pick-s'); s.value = '101'; s.dispatchEvent(new Event('change')); return true; })()`)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.seat-list input:not([disabled])`))))
	evaluate[bool](t, ctx, `(document.querySelector('.seat-list input:not([disabled])').click(), true)`)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//button[starts-with(., "Hold 1 seat")]`)))
	require.True(t, evaluate[bool](t, ctx, `document.querySelector('.actionbar button').disabled`), "no Hold once the turn is over")
	require.True(t, evaluate[bool](t, ctx, `[...document.querySelectorAll('form.inline button')].every((b) => b.disabled)`), "nor best available or standing")
	accessible(t, ctx, "booking after the turn (phone)")
}

// TestPausedLineSaysSo: while the organizer pauses admission, a fan in line
// reads that entry is paused and their place kept, with no estimate of the
// wait; on resume the estimate comes back.
func TestPausedLineSaysSo(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Paused Night", true, 480)
	first := newAPIFan(t, s.st.URL)
	first.join(t, s.st, id)
	first.waitAdmitted(t, id) // takes the only shopping slot (ceiling 1)
	paused := true
	_, err := s.org.SetAdmission(context.Background(), s.organizer, id, nil, organizer.Admission{Paused: &paused})
	require.NoError(t, err)
	first.buyAndLeave(t, id) // a free slot, but nobody is let in

	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/queue", id))
	soon, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(soon,
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Entry is paused by the organizer; your place is kept")]`),
	), "the line says entry is paused")
	require.NotContains(t, text(t, ctx, ".facts"), "Estimated wait", "no estimate while nobody gets in")
	require.NotContains(t, text(t, ctx, "p.lead"), "in a moment", "no promise of the map while entry is paused")
	s.consoleShot(t, ctx, "waiting-room-paused")
	accessible(t, ctx, "waiting room (paused)")

	// A fan joins behind; ours, unsure, goes Back and Forward: the page
	// still says entry is paused and the place is the same, ahead of the
	// newcomer.
	behind := newAPIFan(t, s.st.URL)
	behind.join(t, s.st, id)
	// Each move is left to run after the evaluation: Back may load another
	// document, which would cut the evaluation short.
	evaluate[bool](t, ctx, `setTimeout(() => history.back()), true`)
	within(t, ctx, `!location.pathname.endsWith('/queue')`, 10*time.Second, "Back leaves the waiting room page")
	evaluate[bool](t, ctx, `setTimeout(() => history.forward()), true`)
	within(t, ctx, `location.pathname.endsWith('/queue') && [...document.querySelectorAll('p[role=status]')].some((p) => p.textContent.includes('Entry is paused by the organizer; your place is kept'))`,
		20*time.Second, "Forward: the line still says entry is paused")
	within(t, ctx, `/People ahead\s*0/.test(document.querySelector('.facts').textContent)`, 10*time.Second, "nobody ahead after Back and Forward")
	require.NotContains(t, text(t, ctx, ".facts"), "Estimated wait")
	st, err := behind.Status(context.Background(), id)
	require.NoError(t, err)
	require.EqualValues(t, 1, st.Ahead, "the fan who joined later is still behind")

	paused = false
	_, err = s.org.SetAdmission(context.Background(), s.organizer, id, nil, organizer.Admission{Paused: &paused})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`svg.seatmap`))), "admitted once entry resumes")
}

// TestStandingCheckoutNamesTheQuantityOnce: a standing line reads
// "Floor (standing) × 2", not "2 × Floor (standing) × 2", and its button
// releases tickets, not seats.
func TestStandingCheckoutNamesTheQuantityOnce(t *testing.T) {
	_, ctx := booking(t, "Standing Room", 480)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//span[contains(., "60 left")]`)))
	choose(t, ctx, "#ga-FLOOR", "2", "Get standing tickets")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[contains(@class,"countdown")]`)))
	line := text(t, ctx, ".items li")
	require.True(t, strings.HasPrefix(line, "Floor (standing) × 2"), "the checkout's line: %q", line)
	require.Equal(t, 1, strings.Count(line, "×"), "the quantity once: %q", line)
	require.Equal(t, "Release these tickets", text(t, ctx, ".actions button.secondary"))
}

// TestTicketLimitSaysHowManyMore: a fan holding 4 of the 6 tickets one fan
// may buy who asks best available for 6 is told 2 more are allowed, not
// that they have the most already.
func TestTicketLimitSaysHowManyMore(t *testing.T) {
	_, ctx := booking(t, "Limit Night", 480)
	require.NoError(t, chromedp.Do(ctx, bestReady))
	choose(t, ctx, "#best-q", "4", "Find best seats")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[contains(@class,"countdown")]`)))
	evaluate[bool](t, ctx, `history.back(), true`) // within the app: no page load
	require.NoError(t, chromedp.Do(ctx, bestReady))
	choose(t, ctx, "#best-q", "6", "Find best seats")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`#toast.show.bad`))))
	require.Contains(t, text(t, ctx, "#toast"), "You can buy 2 more tickets for this event")
}

// TestHomeListsWhatIsOnSaleFirst: an event on sale now comes before one
// dated earlier whose sale has not opened.
func TestHomeListsWhatIsOnSaleFirst(t *testing.T) {
	s := newSite(t)
	now := time.Now().UTC()
	s.eventWith(t, "Not Yet Night", false, 480, func(e *organizer.EventSpec) {
		e.StartsAt, e.SaleStartsAt, e.SaleEndsAt = now.Add(24*time.Hour), now.Add(6*time.Hour), now.Add(20*time.Hour)
	})
	s.event(t, "Selling Now Night", false, 480)
	ctx := s.tab(t)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/"),
		chromedp.WaitVisible(`//a[. = "Selling Now Night"]`),
		chromedp.WaitVisible(`//a[. = "Not Yet Night"]`),
	))
	names := evaluate[[]string](t, ctx, `[...document.querySelectorAll('.events h2 a')].map((a) => a.textContent)`)
	require.Equal(t, []string{"Selling Now Night", "Not Yet Night"}, names, "on sale first, each once")
	accessible(t, ctx, "home")
}

// TestPhoneTakenSeatAnswersAtTheFinger: on a phone, tapping a seat another
// fan holds says "Taken" on the map beside the finger.
func TestPhoneTakenSeatAnswersAtTheFinger(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Taken Seat", false, 480)
	other := newAPIFan(t, s.st.URL)
	_, err := other.HoldBest(context.Background(), id, 1, "101")
	require.NoError(t, err)
	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/book", id))
	asPhone(t, ctx)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`))))
	x, y := at(t, ctx, `g[data-section="101"] polygon`)
	tap(t, ctx, x, y)
	require.NoError(t, chromedp.Do(ctx, mapLive, chromedp.WaitVisible(chromedp.CSS(`g[data-section="101"] circle.seat.taken`))))
	taken := evaluate[[]float64](t, ctx, `(() => { const m = document.querySelector('svg.seatmap').getBoundingClientRect();
		const bar = document.querySelector('.actionbar').getBoundingClientRect();
		for (const c of document.querySelectorAll('g[data-section="101"] circle.seat.taken')) {
			const r = c.getBoundingClientRect(); const x = r.x + r.width / 2, y = r.y + r.height / 2;
			if (x > m.left + 20 && x < m.right - 20 && y > m.top + 40 && y < Math.min(m.bottom, bar.top) - 20) return [x, y];
		} return []; })()`)
	require.Len(t, taken, 2, "the other fan's seat in view")
	tap(t, ctx, taken[0], taken[1])
	soon, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(soon, chromedp.WaitVisible(`//*[local-name() = "text" and contains(@class, "seat-note") and . = "Taken"]`)), "the map says the seat is taken")
	note := evaluate[[]float64](t, ctx, `(() => { const r = document.querySelector('.seat-note').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`)
	require.InDelta(t, taken[0], note[0], 40, "beside the finger")
	require.InDelta(t, taken[1], note[1], 40, "beside the finger")
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('circle.seat.selected').length`), "nothing selected")
	accessible(t, ctx, "taken seat tapped (phone)")
}

// TestTicketTimesStayWhole: on My tickets a time never breaks across lines
// ("4:" / "30 PM"), whatever the card's width.
func TestTicketTimesStayWhole(t *testing.T) {
	s, ctx := booking(t, "Whole Times", 480)
	require.NoError(t, chromedp.Do(ctx, bestReady))
	choose(t, ctx, "#best-q", "1", "Find best seats")
	s.pay(t, ctx, "times")
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.st.URL+"/tickets"), chromedp.WaitVisible(chromedp.CSS(`.ticket`))))
	// Each width from 100 to 300 px: the lines a time's characters lie on.
	split := evaluate[[]string](t, ctx, `(() => { const card = document.querySelector('.ticket'); const bad = [];
		for (let w = 100; w <= 300; w += 2) {
			card.style.width = w + 'px';
			for (const p of card.querySelectorAll('p')) {
				const node = [...p.childNodes].find((n) => n.nodeType === 3 && /\d{1,2}:\d\d/.test(n.textContent));
				if (!node) continue;
				const m = /\d{1,2}:\d\d/.exec(node.textContent);
				const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
				const tops = new Set([...r.getClientRects()].map((c) => Math.round(c.top)));
				if (tops.size > 1) bad.push(w + 'px: ' + p.textContent);
			}
		}
		return bad; })()`)
	require.Empty(t, split, "times broken across lines")
}

// TestSeatListIsOneTabStop: a keyboard fan tabs past a row's seats in one
// step and moves among them with the arrow keys.
func TestSeatListIsOneTabStop(t *testing.T) {
	_, ctx := booking(t, "Keyboard Night", 480)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`))))
	evaluate[bool](t, ctx, `(() => { const s = document.querySelector('#pick-s'); s.value = '101'; s.dispatchEvent(new Event('change')); return true; })()`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`.seat-list input`)),
		// A row of taken seats has no Tab stop at all.
		mapLive,
		chromedp.Focus(chromedp.CSS(`#pick-r`)),
		chromedp.KeyEvent(kb.Tab),
	))
	require.True(t, evaluate[bool](t, ctx, `document.activeElement.closest('.seat-list') !== null`), "Tab enters the row's seats")
	first := evaluate[string](t, ctx, `document.activeElement.value`)
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.ArrowRight)))
	require.True(t, evaluate[bool](t, ctx, `document.activeElement.closest('.seat-list') !== null`), "the arrow keys move among the seats")
	require.NotEqual(t, first, evaluate[string](t, ctx, `document.activeElement.value`))
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)))
	require.False(t, evaluate[bool](t, ctx, `document.activeElement.closest('.seat-list') !== null`), "one Tab leaves the row: %s",
		evaluate[string](t, ctx, `document.activeElement.outerHTML`))
}

// TestWelcomeLeavesTheScreenSoon: the greeting after signing up is gone
// well before the 6 s a toast with news stays.
func TestWelcomeLeavesTheScreenSoon(t *testing.T) {
	_, ctx := booking(t, "Greeting", 480)
	within(t, ctx, `!document.querySelector('#toast').classList.contains('show')`, 4*time.Second, "the welcome toast is gone within 4 s")
	require.Equal(t, "Welcome, Ana Fan.", evaluate[string](t, ctx, `document.querySelector('#toast').textContent`), "it was the greeting")
}

// TestNobodyInLineIsNotToldYouAreNext: with nobody in line and a place to
// shop free, the waiting room never says "You are next"; it says the map
// is coming.
func TestNobodyInLineIsNotToldYouAreNext(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Empty Line", true, 480)
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	require.NoError(t, s.st.WaitForRoom(context.Background(), id))
	// Every headline the waiting room shows, from the page's first moment.
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.leads = [];
		new MutationObserver(() => { const l = document.querySelector('#main p.lead'); if (l && l.textContent !== window.leads.at(-1)) window.leads.push(l.textContent); })
			.observe(document, { subtree: true, childList: true, characterData: true });`})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/queue", id)),
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
	))
	leads := evaluate[[]string](t, ctx, `window.leads`)
	require.NotEmpty(t, leads)
	require.NotContains(t, leads, "You are next.", "headlines shown: %q", leads)
}

// TestPageChangeStartsAtTheTop: after a page change a keyboard fan's next
// Tab reaches the skip link (as after a page load), and the skip link
// moves to the content without drawing the page again.
func TestPageChangeStartsAtTheTop(t *testing.T) {
	_, ctx := booking(t, "Keyboard Start", 480)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
		chromedp.Click(`//nav//a[. = "My orders"]`),
		chromedp.WaitVisible(`//h1[. = "My orders"]`),
		chromedp.KeyEvent(kb.Tab),
	))
	require.Equal(t, "Skip to content", evaluate[string](t, ctx, `document.activeElement.textContent`), "the first Tab after a page change")
	before := evaluate[int](t, ctx, `history.length`)
	require.NoError(t, chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)))
	within(t, ctx, `document.activeElement.id === 'main'`, 5*time.Second, "the skip link moves focus to the content")
	require.Equal(t, before, evaluate[int](t, ctx, `history.length`), "the skip link is no page change")
	accessible(t, ctx, "my orders")
}

// TestReleaseKeepsTheTurn: a fan on a phone who releases seats at checkout
// is back on the seat map with the turn's end in the bar, not on the event
// page's "Join the waiting room"; the slot stays theirs (the next fan still
// waits) and they hold other seats in the same turn.
func TestReleaseKeepsTheTurn(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Second Thoughts", true, 480)
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	asPhone(t, ctx)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/queue", id)),
		bestReady,
	))
	next := newAPIFan(t, s.st.URL)
	next.join(t, s.st, id) // waits behind the only shopping slot (ceiling 1)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(`//p[contains(@class,"countdown")]`),
		chromedp.Click(`//button[. = "Release these seats"]`),
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
	))
	require.Equal(t, fmt.Sprintf("/events/%d/book", id), evaluate[string](t, ctx, `location.pathname`), "back on the map")
	require.NotContains(t, text(t, ctx, "main"), "Join the waiting room")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[contains(@class,"turn") and contains(., "Your turn to buy ends at")]`)))
	accessible(t, ctx, "booking after a release (phone)")

	p, err := s.st.App.Room.Progress(context.Background(), id)
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Active, "the slot is still the fan's")
	st, err := next.Status(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "waiting", st.State, "the next fan is not let in early")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(`//p[contains(@class,"countdown")]`),
	), "other seats held in the same turn")
	// Back on the map: the bar carries both deadlines, the turn's and the hold's.
	evaluate[bool](t, ctx, `history.back(), true`)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//p[contains(@class, "holding") and contains(., "continue to pay")]`),
		chromedp.WaitVisible(`//p[contains(@class,"turn") and contains(., "Your turn to buy ends at")]`),
	))
	s.shot(t, ctx, "phone-hold-bar")

	// Done buying: the fan hands the slot on at once instead of at the
	// turn's end.
	soon, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(soon, chromedp.Click(`//button[. = "Let the next fan in"]`), chromedp.WaitVisible(`//h1[. = "Second Thoughts"]`)),
		"the map offers to hand the slot on")
	next.waitAdmitted(t, id)
}

// TestHomeListsWhatOpensSoonNext: an event whose sale opens within days
// comes right after what is on sale now, before events dated earlier whose
// sales open later.
func TestHomeListsWhatOpensSoonNext(t *testing.T) {
	s := newSite(t)
	now := time.Now().UTC()
	s.eventWith(t, "Far Sale Night", false, 480, func(e *organizer.EventSpec) {
		e.StartsAt, e.SaleStartsAt, e.SaleEndsAt = now.Add(20*24*time.Hour), now.Add(10*24*time.Hour), now.Add(19*24*time.Hour)
	})
	s.eventWith(t, "Opens Tomorrow Night", false, 480, func(e *organizer.EventSpec) {
		e.StartsAt, e.SaleStartsAt, e.SaleEndsAt = now.Add(40*24*time.Hour), now.Add(26*time.Hour), now.Add(39*24*time.Hour)
	})
	s.event(t, "Selling Now Night", false, 480)
	ctx := s.tab(t)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/"),
		chromedp.WaitVisible(`//a[. = "Far Sale Night"]`),
	))
	names := evaluate[[]string](t, ctx, `[...document.querySelectorAll('.events h2 a')].map((a) => a.textContent)`)
	require.Equal(t, []string{"Selling Now Night", "Opens Tomorrow Night", "Far Sale Night"}, names, "on sale, then opening soon, each once")
	require.Contains(t, text(t, ctx, "main"), "Opening soon")
	accessible(t, ctx, "home")
}

// TestDesktopMapFitsAboveTheBar: on a 1280×768 screen the whole venue fits
// between the top of the window and the sticky bar once the map is
// scrolled to, so no section hides under the bar.
func TestDesktopMapFitsAboveTheBar(t *testing.T) {
	s, ctx := booking(t, "Short Screen", 480)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 768),
		chromedp.Reload(),
		chromedp.WaitVisible(`//p[contains(., "Live")]`),
	))
	hidden := evaluate[[]string](t, ctx, `(() => { document.querySelector('svg.seatmap').scrollIntoView({ block: 'start' });
		const bar = document.querySelector('.actionbar').getBoundingClientRect();
		return [...document.querySelectorAll('svg.seatmap g[data-section]')].filter((g) => g.getBoundingClientRect().bottom > bar.top)
			.map((g) => g.dataset.section); })()`)
	require.Empty(t, hidden, "sections under the sticky bar at 768 px")
	s.shot(t, ctx, "desktop-768")
	accessible(t, ctx, "booking (1280×768)")
}
