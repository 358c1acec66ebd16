package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
)

// liveMapBudget is how long a slowed phone may take from "it is your turn"
// to a seat map that answers taps.
const liveMapBudget = 1500 * time.Millisecond

var phoneViewport = chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(2))

// asPhone makes the tab a mid-range phone: 390×844, touch, a CPU 4× slower
// than this machine's.
func asPhone(t *testing.T, ctx context.Context) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, phoneViewport))
	_, err := chromedp.Call(ctx, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: 4})
	require.NoError(t, err)
}

// touch sends one touch event with the fingers at the points given.
func touch(t *testing.T, ctx context.Context, kind input.DispatchTouchEventType, pts ...[2]float64) {
	t.Helper()
	touchAt(t, ctx, 0, kind, pts...)
}

// touchAt is touch at a given time (seconds since the epoch; 0: now).
func touchAt(t *testing.T, ctx context.Context, at float64, kind input.DispatchTouchEventType, pts ...[2]float64) {
	t.Helper()
	tp := []*input.TouchPoint{}
	for i, p := range pts {
		id := float64(i + 1)
		tp = append(tp, &input.TouchPoint{X: p[0], Y: p[1], ID: &id})
	}
	_, err := chromedp.Call(ctx, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: kind, TouchPoints: tp, Timestamp: input.TimeSinceEpoch(at)})
	require.NoError(t, err)
}

// doubleTap taps twice, the taps stamped 120 ms apart as a finger makes
// them, however long the machine takes to deliver them.
func doubleTap(t *testing.T, ctx context.Context, x, y float64) {
	t.Helper()
	at := float64(time.Now().UnixMicro()) / 1e6
	for _, d := range []float64{0, 0.12} {
		touchAt(t, ctx, at+d, input.DispatchTouchEventTypeTouchStart, [2]float64{x, y})
		touchAt(t, ctx, at+d+0.04, input.DispatchTouchEventTypeTouchEnd)
	}
}

func tap(t *testing.T, ctx context.Context, x, y float64) {
	t.Helper()
	touch(t, ctx, input.DispatchTouchEventTypeTouchStart, [2]float64{x, y})
	touch(t, ctx, input.DispatchTouchEventTypeTouchEnd)
}

// at returns the centre of the first element matching the CSS selector,
// in viewport pixels.
func at(t *testing.T, ctx context.Context, sel string) (float64, float64) {
	t.Helper()
	p := evaluate[[]float64](t, ctx, fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, sel))
	return p[0], p[1]
}

// mapPoint returns the venue point under a viewport point of the seat map.
func mapPoint(t *testing.T, ctx context.Context, x, y float64) [2]float64 {
	t.Helper()
	p := evaluate[[]float64](t, ctx, fmt.Sprintf(`(() => { const m = document.querySelector('svg.seatmap'); const r = m.getBoundingClientRect();
		const [vx, vy, vw, vh] = m.getAttribute('viewBox').split(' ').map(Number); return [vx + (%f - r.x) / r.width * vw, vy + (%f - r.y) / r.height * vh]; })()`, x, y))
	return [2]float64{p[0], p[1]}
}

// between reads the time between two performance marks of the page.
func between(t *testing.T, ctx context.Context, from, to string) time.Duration {
	t.Helper()
	var ms float64
	poll, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`performance.getEntriesByName(%q).length > 0`, to), chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	require.True(t, poll)
	start := "0"
	if from != "" {
		start = fmt.Sprintf(`performance.getEntriesByName(%q).at(-1).startTime`, from)
	}
	ms = evaluate[float64](t, ctx, fmt.Sprintf(`performance.getEntriesByName(%q).at(-1).startTime - %s`, to, start))
	return time.Duration(ms * float64(time.Millisecond))
}

// The on-sale on a phone: the waiting room hands over to a live map of a
// 20,000-seat stadium within the budget; a tapped section fills the map
// with seats a finger can hit; pinch, "+" and the sticky hold bar work;
// every page passes axe-core at phone size.
func TestPhoneOnSale(t *testing.T) {
	s := newSite(t)
	var err error
	s.layout, err = s.org.ImportLayoutAs(context.Background(), s.organizer, 0, venue.Stadium("Estádio Teste", "Rio de Janeiro", 20000, 5000))
	require.NoError(t, err)
	id := s.event(t, "Phone Night", true, 480)
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	require.NoError(t, s.st.WaitForRoom(context.Background(), id))
	// The layout is immutable and cached at the edge: only the first fan
	// of an on-sale waits for the origin to build it.
	res, err := http.Get(fmt.Sprintf("%s/api/venues/%d/layouts/%d", s.st.URL, s.layout.VenueID, s.layout.Version))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	asPhone(t, ctx)

	// The best of three turns (an admitted fan back in the waiting room is
	// sent on at once): the machine running the tests is shared.
	var best time.Duration
	for try := range 3 {
		require.NoError(t, chromedp.Do(ctx,
			chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/queue", id)),
			chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
		))
		admitted := between(t, ctx, "catraca:admitted", "catraca:map-live")
		t.Logf("phone (390×844, touch, CPU 4×): admission → live map %v", admitted.Round(time.Millisecond))
		if try == 0 || admitted < best {
			best = admitted
		}
		if best < liveMapBudget {
			break
		}
	}
	require.Less(t, best, liveMapBudget, "admission → live map on a slowed phone")
	deadline := text(t, ctx, ".turn")
	require.Regexp(t, `Your turn to buy ends at \d{1,2}:\d\d`, deadline)
	accessible(t, ctx, "booking (phone)")

	// A fresh page load with nothing cached.
	_, err = chromedp.Call(ctx, network.ClearBrowserCache, cdp.Empty{})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/book", id))))
	cold := between(t, ctx, "", "catraca:map-live")
	t.Logf("phone: page load with an empty cache → live map %v", cold.Round(time.Millisecond))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`))))
	s.shot(t, ctx, "phone-seat-map")
	overflow := evaluate[bool](t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`)
	require.False(t, overflow, "no sideways scrolling on a phone")
	inView := evaluate[bool](t, ctx, `(() => { const r = document.querySelector('.actionbar button').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`)
	require.True(t, inView, "the hold button stays on screen")
	disabled := evaluate[bool](t, ctx, `document.querySelector('.actionbar button').disabled`)
	require.True(t, disabled, "nothing to hold before a seat is chosen")
	require.Contains(t, text(t, ctx, "#pick-s"), "Section 101 · R$450.00 · ", "price and seats left per section")

	// "+" zooms around the centre of the map.
	cx, cy := at(t, ctx, "svg.seatmap")
	before := mapPoint(t, ctx, cx, cy)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`//button[@aria-label="Zoom in"]`)))
	after := mapPoint(t, ctx, cx, cy)
	require.InDelta(t, before[0], after[0], 2)
	require.InDelta(t, before[1], after[1], 2)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`//button[. = "Whole venue"]`)))

	// Pinch out around a point: the venue under the fingers stays there.
	px, py := cx-60, cy+40
	under := mapPoint(t, ctx, px, py)
	width := evaluate[float64](t, ctx, `Number(document.querySelector('svg.seatmap').getAttribute('viewBox').split(' ')[2])`)
	touch(t, ctx, input.DispatchTouchEventTypeTouchStart, [2]float64{px - 20, py}, [2]float64{px + 20, py})
	for d := 30.0; d <= 80; d += 10 {
		touch(t, ctx, input.DispatchTouchEventTypeTouchMove, [2]float64{px - d, py}, [2]float64{px + d, py})
	}
	touch(t, ctx, input.DispatchTouchEventTypeTouchEnd)
	zoomed := evaluate[float64](t, ctx, `Number(document.querySelector('svg.seatmap').getAttribute('viewBox').split(' ')[2])`)
	require.InDelta(t, width/4, zoomed, width/20, "fingers 40 → 160 px apart zoom in 4×")
	still := mapPoint(t, ctx, px, py)
	require.InDelta(t, under[0], still[0], 3)
	require.InDelta(t, under[1], still[1], 3)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`//button[. = "Whole venue"]`)))

	// A double tap on the floor (no seats to open) zooms in 2× around it.
	fx, fy := at(t, ctx, `g[data-section="FLOOR"] polygon`)
	under = mapPoint(t, ctx, fx, fy)
	width = evaluate[float64](t, ctx, `Number(document.querySelector('svg.seatmap').getAttribute('viewBox').split(' ')[2])`)
	doubleTap(t, ctx, fx, fy)
	zoomed = evaluate[float64](t, ctx, `Number(document.querySelector('svg.seatmap').getAttribute('viewBox').split(' ')[2])`)
	require.InDelta(t, width/2, zoomed, width/20, "a double tap zooms in 2×")
	still = mapPoint(t, ctx, fx, fy)
	require.InDelta(t, under[0], still[0], 3)
	require.InDelta(t, under[1], still[1], 3)
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`//button[. = "Whole venue"]`)))

	// Section first: a tap opens section 101 with seats a finger can hit;
	// its label stays.
	x, y := at(t, ctx, `g[data-section="101"] polygon`)
	tap(t, ctx, x, y)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`g[data-section="101"] circle.seat`))))
	seat := evaluate[float64](t, ctx, `document.querySelector('g[data-section="101"] circle.seat').getBoundingClientRect().width`)
	t.Logf("phone: a seat of an opened section is %.0f px wide", seat)
	require.GreaterOrEqual(t, seat, 24.0)
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('circle.seat.selected').length`), "the tap that opens a section selects nothing")
	labelShown := evaluate[bool](t, ctx, `[...document.querySelectorAll('.section-label')].some((l) => l.textContent === '101' && getComputedStyle(l).display !== 'none')`)
	require.True(t, labelShown, "section labels stay when zoomed")
	require.Equal(t, "101", evaluate[string](t, ctx, `document.querySelector('#pick-s').value`), "the lists follow the map")

	// Tap a free seat in view, then hold it from the sticky bar.
	require.NoError(t, chromedp.Do(ctx, mapLive))
	free := evaluate[[]float64](t, ctx, `(() => { const m = document.querySelector('svg.seatmap').getBoundingClientRect();
		const bar = document.querySelector('.actionbar').getBoundingClientRect();
		for (const c of document.querySelectorAll('g[data-section="101"] circle.seat:not(.taken)')) {
			const r = c.getBoundingClientRect(); const x = r.x + r.width / 2, y = r.y + r.height / 2;
			if (x > m.left + 20 && x < m.right - 20 && y > m.top + 20 && y < Math.min(m.bottom, bar.top) - 20) return [x, y];
		} return []; })()`)
	require.Len(t, free, 2, "a free seat of section 101 in view")
	tap(t, ctx, free[0], free[1])
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//button[starts-with(., "Hold 1 seat")]`)))
	s.shot(t, ctx, "phone-seat-map-section")
	hx, hy := at(t, ctx, ".actionbar button")
	tap(t, ctx, hx, hy)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//p[contains(@class,"countdown")]`)))
	held := between(t, ctx, "catraca:hold", "catraca:checkout")
	t.Logf("phone: hold → checkout %v", held.Round(time.Millisecond))
	require.Contains(t, text(t, ctx, ".event-line"), "Phone Night · ")
	require.Regexp(t, `\(until \d{1,2}:\d\d`, text(t, ctx, ".countdown"))
	require.NotContains(t, text(t, ctx, "#toast"), "taken", "no alarm about the fan's own seats")
	accessible(t, ctx, "checkout (phone)")
}

// freeSeatsInView returns the centres of up to n free seats of a section
// that lie on the map and above the sticky bar.
func freeSeatsInView(t *testing.T, ctx context.Context, section string, n int) [][]float64 {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, mapLive))
	return evaluate[[][]float64](t, ctx, fmt.Sprintf(`(() => { const m = document.querySelector('svg.seatmap').getBoundingClientRect();
		const bar = document.querySelector('.actionbar').getBoundingClientRect(); const out = [];
		for (const c of document.querySelectorAll('g[data-section="%s"] circle.seat:not(.taken):not(.selected)')) {
			const r = c.getBoundingClientRect(); const x = r.x + r.width / 2, y = r.y + r.height / 2;
			if (x > m.left + 20 && x < m.right - 20 && y > m.top + 20 && y < Math.min(m.bottom, bar.top) - 20) out.push([x, y]);
			if (out.length === %d) break;
		} return out; })()`, section, n))
}

// An opened section on a phone says which row is which and numbers its
// seats (a corner section's rows run diagonally), and the sticky bar names
// every seat chosen instead of cutting the list off ("113 M-5,…").
func TestPhoneSectionShowsRowsAndSeats(t *testing.T) {
	s, ctx := booking(t, "Rows Night", 480)
	asPhone(t, ctx)
	require.NoError(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`))))
	visible := func(sel string) []string {
		return evaluate[[]string](t, ctx, fmt.Sprintf(`(() => { const m = document.querySelector('svg.seatmap').getBoundingClientRect();
			return [...document.querySelectorAll(%q)].filter((e) => { const r = e.getBoundingClientRect();
				return getComputedStyle(e).display !== 'none' && r.width > 0 && r.left >= m.left && r.right <= m.right && r.top >= m.top && r.bottom <= m.bottom; })
				.map((e) => e.textContent); })()`, sel))
	}
	require.Empty(t, visible(`text.seat-number`), "the whole venue shows no seat numbers")

	x, y := at(t, ctx, `g[data-section="101"] polygon`) // a corner section, beside the stage
	tap(t, ctx, x, y)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`g[data-section="101"] circle.seat`))))
	rows := visible(`g[data-section="101"] text.row-label`)
	require.Contains(t, rows, "A", "row labels of the opened section: %v", rows)
	require.Contains(t, rows, "B", "row labels of the opened section: %v", rows)
	numbers := visible(`g[data-section="101"] text.seat-number`)
	require.Contains(t, numbers, "1", "seat numbers of the opened section: %v", numbers)
	require.Contains(t, numbers, "2", "seat numbers of the opened section: %v", numbers)
	size := evaluate[float64](t, ctx, `document.querySelector('g[data-section="101"] text.seat-number').getBoundingClientRect().height`)
	require.GreaterOrEqual(t, size, 9.0, "a seat number is readable")

	for range 4 {
		free := freeSeatsInView(t, ctx, "101", 1)
		require.Len(t, free, 1, "a free seat of section 101 in view")
		tap(t, ctx, free[0][0], free[0][1])
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//button[starts-with(., "Hold 4 seats")]`)))
	s.shot(t, ctx, "phone-seat-map-rows")
	chosen := evaluate[[]string](t, ctx, `[...document.querySelectorAll('circle.seat.selected')].map((c) => c.nextElementSibling.textContent)`)
	require.Len(t, chosen, 4)
	summary := text(t, ctx, ".bar-summary")
	require.Contains(t, summary, "101 row ")
	for _, n := range chosen {
		require.Regexp(t, `\b`+n+`\b`, summary, "the bar names seat %s", n)
	}
	clipped := evaluate[bool](t, ctx, `(() => { const e = document.querySelector('.bar-summary'); return e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1; })()`)
	require.False(t, clipped, "the bar shows the whole selection: %q", summary)
	accessible(t, ctx, "opened section (phone)")
}
