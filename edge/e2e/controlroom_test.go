package e2e

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/pspsim"
)

// buy holds a standing place, pays for it on the PSP's page and waits for
// the order to be paid (which also frees the fan's shopping slot).
func (f apiFan) buy(t *testing.T, event int64) int64 {
	t.Helper()
	return f.buyN(t, event, 1)
}

// buyN buys n standing places in one order, as buy does.
func (f apiFan) buyN(t *testing.T, event int64, n int) int64 {
	t.Helper()
	ctx := context.Background()
	h, err := fan.Retry(ctx, func() (fan.Hold, error) { return f.HoldGA(ctx, event, "FLOOR", n) })
	require.NoError(t, err)
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		u, o, err := f.Checkout(ctx, h.OrderID)
		require.NoError(t, err)
		if url = u; url == "" && o.Payment != nil {
			url = o.Payment.URL
		}
	}
	require.NotEmpty(t, url, "a payment page for order %d", h.OrderID)
	require.NoError(t, f.PayOnPage(ctx, url, pspsim.CardSuccess))
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if o, err := f.Order(ctx, h.OrderID); err == nil && o.Status == "paid" {
			return h.OrderID
		}
	}
	t.Fatalf("order %d was not paid", h.OrderID)
	return 0
}

// figure reads a control-room figure as the page shows it now.
func figure(t *testing.T, ctx context.Context, key string) int64 {
	t.Helper()
	v := evaluate[string](t, ctx, `(document.querySelector('[data-figure="`+key+`"]') || {}).dataset?.value || ''`)
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// waitFigure waits until the page shows a figure that satisfies ok.
func waitFigure(t *testing.T, ctx context.Context, key string, ok func(int64) bool, what string) int64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if n := figure(t, ctx, key); ok(n) {
			return n
		}
	}
	t.Fatalf("the control room never showed %s (%s is %d)", what, key, figure(t, ctx, key))
	return 0
}

// confirmAction presses a control, then the dialog's confirmation.
func confirmAction(t *testing.T, ctx context.Context, control, confirmLabel string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//section[@aria-labelledby="controls-h"]//button[. = "`+control+`"]`),
		chromedp.WaitVisible(`//dialog[@open]//button[. = "`+confirmLabel+`"]`),
		chromedp.Click(`//dialog[@open]//button[. = "`+confirmLabel+`"]`),
		chromedp.WaitNotPresent(`//dialog`),
	))
}

// TestControlRoomFollowsASaleAndPausesTheLine: an organizer watches a
// small crowd buy through the waiting room (ceiling 1): the line shortens
// and the sales count up as each fan pays. Paused, the line stops although
// a slot is free; resumed, the next fan is in at once.
func TestControlRoomFollowsASaleAndPausesTheLine(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Live Night", true, 480)
	path := "/organizer/events/" + strconv.FormatInt(id, 10) + "/live"
	org := s.tabOf(t, s.newBrowser(t))
	s.logInOrganizer(t, org, path)
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//h1[. = "Control room: Live Night"]`)))

	crowd := make([]apiFan, 4)
	for i := range crowd {
		crowd[i] = newAPIFan(t, s.st.URL)
		crowd[i].join(t, s.st, id)
	}
	crowd[0].waitAdmitted(t, id)
	waitFigure(t, org, "waiting", func(n int64) bool { return n == 3 }, "three fans waiting behind the one shopping")
	crowd[0].buy(t, id)
	crowd[1].waitAdmitted(t, id)
	waitFigure(t, org, "sold", func(n int64) bool { return n == 1 }, "one ticket sold")
	waitFigure(t, org, "revenue", func(n int64) bool { return n == 25000 }, "the first sale's revenue")
	waitFigure(t, org, "waiting", func(n int64) bool { return n == 2 }, "the line moving on")
	require.Positive(t, evaluate[int](t, org, `document.querySelectorAll('#plot-flow path.line').length`), "joins and admissions are plotted")
	require.Positive(t, evaluate[int](t, org, `document.querySelectorAll('.state-map .seatmap polygon').length`), "the seat map is drawn")
	s.shot(t, org, "control-room")
	accessible(t, org, "control room")

	confirmAction(t, org, "Pause admission", "Pause admission")
	require.NoError(t, chromedp.Do(org,
		chromedp.WaitVisible(`//p[@role="status" and contains(., "Admission paused")]`),
		chromedp.WaitVisible(`//span[contains(@class,"tag") and . = "Admission paused"]`),
	))
	// The admission controller re-reads the event about once a second: the
	// room's progress says paused once it has, and every tick after that
	// admits nobody.
	require.Eventually(t, func() bool {
		p, err := crowd[2].Progress(context.Background(), id)
		return err == nil && p.Paused
	}, 30*time.Second, 100*time.Millisecond, "the admission controller to see the pause")
	admitted := figure(t, org, "admitted")
	crowd[1].buy(t, id) // frees the only shopping slot while paused
	waitFigure(t, org, "sold", func(n int64) bool { return n == 2 }, "the second sale")
	// A dozen admission ticks (250 ms each) with a free slot: nobody is let in.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		st, err := crowd[2].Status(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, "waiting", st.State, "paused: the next fan stays in line")
	}
	require.Equal(t, admitted, figure(t, org, "admitted"), "nobody admitted while paused")
	require.EqualValues(t, 2, figure(t, org, "waiting"))

	confirmAction(t, org, "Resume admission", "Resume admission")
	crowd[2].waitAdmitted(t, id)
	waitFigure(t, org, "waiting", func(n int64) bool { return n == 1 }, "the line moving again")
}

// askCeiling types a ceiling in the control room and presses Set ceiling,
// leaving its confirmation open.
func askCeiling(t *testing.T, ctx context.Context, ceiling string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#ceiling`), ceiling),
		chromedp.Click(`//section[@aria-labelledby="controls-h"]//button[. = "Set ceiling"]`),
		chromedp.WaitVisible(`//dialog[@open]//button[. = "Set ceiling"]`),
	))
}

// pressInDialog presses a button of the open dialog and waits for it to close.
func pressInDialog(t *testing.T, ctx context.Context, label string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//dialog[@open]//button[. = "`+label+`"]`),
		chromedp.WaitNotPresent(`//dialog`),
	))
}

// openRoom opens, as the organizer in a browser of its own, the control
// room of event id named name once it shows figures (its controls act on
// them); the tab gives up after two minutes.
func (s *site) openRoom(t *testing.T, id int64, name string) context.Context {
	t.Helper()
	org, cancel := context.WithTimeout(s.tabOf(t, s.newBrowser(t)), 2*time.Minute)
	t.Cleanup(cancel)
	s.logInOrganizer(t, org, "/organizer/events/"+strconv.FormatInt(id, 10)+"/live")
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//h1[. = "Control room: `+name+`"]`), chromedp.WaitVisible(`[data-figure="active"]`)))
	return org
}

// TestControlRoomControlsFollowEachOther: at the busiest minute an
// organizer pauses, resumes and at once changes the ceiling, while another
// tab pauses the line: each control applies to the event as it is now (none
// asks to reload), and the other tab's pause holds. A resume confirmed on a
// page that missed a pause is refused, saying so, instead of undoing it.
func TestControlRoomControlsFollowEachOther(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Busy Night", true, 480)
	org := s.openRoom(t, id, "Busy Night")
	status := func(text string) {
		t.Helper()
		wait, cancel := context.WithTimeout(org, 30*time.Second)
		defer cancel()
		err := chromedp.Do(wait, chromedp.WaitVisible(`//p[@role="status" and contains(., "`+text+`")]`))
		require.NoError(t, err, "the control room said %q, not %q (%s)", evaluate[string](t, org, `document.querySelector('p[role=status]').textContent`), text,
			evaluate[string](t, org, `document.querySelector('main p').textContent`))
	}
	ctx := context.Background()
	pause := func(paused bool) { // from another tab
		t.Helper()
		_, err := s.org.SetAdmission(ctx, s.organizer, id, nil, organizer.Admission{Paused: &paused})
		require.NoError(t, err)
	}

	confirmAction(t, org, "Pause admission", "Pause admission")
	status("Admission paused")
	confirmAction(t, org, "Resume admission", "Resume admission")
	status("Admission resumed.")
	askCeiling(t, org, "5")
	pause(true)
	pressInDialog(t, org, "Set ceiling")
	status("Ceiling set to 5.")
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//span[contains(@class,"tag") and . = "Admission paused"]`)))
	e, err := s.org.Event(ctx, s.organizer, id)
	require.NoError(t, err)
	require.Equal(t, 5, e.WaitingRoom.Ceiling)
	require.True(t, e.WaitingRoom.Paused, "the ceiling kept the other tab's pause")

	// The page shows the pause; meanwhile another tab resumes and pauses
	// again: this page's resume would undo a pause it never saw.
	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//section[@aria-labelledby="controls-h"]//button[. = "Resume admission"]`),
		chromedp.WaitVisible(`//dialog[@open]//button[. = "Resume admission"]`)))
	pause(false)
	pause(true)
	pressInDialog(t, org, "Resume admission")
	status("Admission paused changed: now true.")
	e, err = s.org.Event(ctx, s.organizer, id)
	require.NoError(t, err)
	require.True(t, e.WaitingRoom.Paused, "the other tab's pause holds")
	confirmAction(t, org, "Resume admission", "Resume admission")
	status("Admission resumed.")
}

// TestCeilingChangeShowsOldAndNew: the ceiling's confirmation says what it
// was and what it becomes, and warns when the new one is far from it (200
// typed as 200150), which cancelling leaves as it was; the Shopping now
// tile says why the limit it shows is below the ceiling set.
func TestCeilingChangeShowsOldAndNew(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Ceiling Night", true, 480)
	ctx := context.Background()
	two := 200
	_, err := s.org.SetAdmission(ctx, s.organizer, id, nil, organizer.Admission{Ceiling: &two})
	require.NoError(t, err)
	org := s.openRoom(t, id, "Ceiling Night")

	askCeiling(t, org, "200150")
	require.Equal(t, "Change the ceiling from 200 to 200150?", text(t, org, `dialog[open] h2`))
	require.Equal(t, "Check the number: 200150 is 1001 times the ceiling set now (200).", text(t, org, `dialog[open] .notice.bad`))
	require.Contains(t, evaluate[string](t, org, `document.querySelector('dialog[open]').getAttribute('aria-describedby')`), "-w",
		"the warning is read with the question")
	s.screen(t, org, "control-room-ceiling")
	accessible(t, org, "ceiling confirmation")
	pressInDialog(t, org, "Cancel")
	e, err := s.org.Event(ctx, s.organizer, id)
	require.NoError(t, err)
	require.Equal(t, 200, e.WaitingRoom.Ceiling, "cancelled: nothing changed")

	askCeiling(t, org, "250")
	require.Equal(t, "Change the ceiling from 200 to 250?", text(t, org, `dialog[open] h2`))
	require.Zero(t, evaluate[int](t, org, `document.querySelectorAll('dialog[open] .notice').length`), "no warning for a small step")
	pressInDialog(t, org, "Set ceiling")
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//p[@role="status" and . = "Ceiling set to 250."]`)))
	// Nobody shops, so the room has not raised its limit from the ceiling
	// of its first tick (1, or 200 if it came after the change): the tile
	// shows it and says why it is below the ceiling set.
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//dd[@data-figure="active" and contains(., "of the 250 set")]`)))
	require.Regexp(t, `^0 / (1|200) \(limit now (1|200) of the 250 set: the room raises it step by step while holds answer fast, and lowers it when they slow down\)$`,
		text(t, org, `[data-figure="active"]`))
}

// clippedTicks lists the axis labels of a plot that overflow its left edge.
const clippedTicks = `((id) => { const svg = document.querySelector('#' + id + ' svg'); const left = svg.getBoundingClientRect().left;
  return [...svg.querySelectorAll('text.tick')].filter((t) => t.getBoundingClientRect().left < left - 0.5).map((t) => t.textContent); })`

// TestControlRoomPlotsSayWhatTheyShow: one fan joins and is let in (joins
// and admissions equal, the only slot taken), then pays: the plots say that
// the two flow lines coincide and that shopping runs along the ceiling,
// and the revenue axis reads whole.
func TestControlRoomPlotsSayWhatTheyShow(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Plot Night", true, 480)
	org := s.openRoom(t, id, "Plot Night")
	f := newAPIFan(t, s.st.URL)
	f.join(t, s.st, id)
	f.waitAdmitted(t, id)
	wait, cancelWait := context.WithTimeout(org, 30*time.Second)
	defer cancelWait()
	require.NoError(t, chromedp.Do(wait,
		chromedp.WaitVisible(`//figure[@id="plot-flow"]/p[. = "Joins and Admissions are equal: their lines coincide."]`),
		chromedp.WaitVisible(`//figure[@id="plot-active"]/p[starts-with(., "At the ceiling:")]`),
	), "the flow plot said %q, the shopping plot %q", text(t, org, "#plot-flow"), text(t, org, "#plot-active"))
	accessible(t, org, "control room with notes")
	f.buy(t, id)
	waitFigure(t, org, "revenue", func(n int64) bool { return n == 25000 }, "the sale's revenue")
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//figure[@id="plot-revenue"]//*[local-name()="text" and . = "500"]`)),
		"the revenue axis: %v", evaluate[[]string](t, org, `[...document.querySelectorAll('#plot-revenue text.tick')].map((t) => t.textContent)`))
	for _, plot := range []string{"plot-revenue", "plot-flow", "plot-active", "plot-sold"} {
		require.Empty(t, evaluate[[]string](t, org, clippedTicks+`('`+plot+`')`), "axis labels cut off on %s", plot)
	}
}
