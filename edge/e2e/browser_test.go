package e2e

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
)

var updateDocs = flag.Bool("update-docs", false, "copy the screenshots the README shows into docs/")

// inDocs are the screenshots the README shows.
var inDocs = map[string]bool{"seat-map": true, "waiting-room": true, "reserved-checkout": true, "reserved-tickets": true,
	"phone-seat-map": true, "phone-seat-map-section": true, "sold-out": true,
	"console-venue-errors": true, "console-venue-preview": true, "console-event-new": true, "console-event": true, "console-refunds": true,
	"control-room": true, "orders": true,
	"phone-seat-map-rows": true, "phone-hold-bar": true, "waiting-room-paused": true, "control-room-ceiling": true}

// site is one running stack with a browser beside it.
type site struct {
	st        *stack.Stack
	org       *organizer.Service
	organizer int64
	chrome    string
	browser   context.Context
	shots     string
	layout    venue.Layout
}

func newSite(t *testing.T) *site {
	t.Helper()
	return newSiteWith(t, func(*config.Config) {})
}

// newSiteWith is newSite with a last change to the stack's configuration.
func newSiteWith(t *testing.T, change func(*config.Config)) *site {
	t.Helper()
	chrome, err := exec.LookPath("chromium")
	require.NoError(t, err, "Chromium is missing: make test installs Debian's chromium package (make browser)")
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	change(&cfg)
	ctx, cancel := context.WithCancel(context.Background())
	var logger *slog.Logger
	if !testing.Verbose() {
		logger = slog.New(slog.DiscardHandler)
	}
	st, err := stack.Start(ctx, cfg, stack.Options{AdmitInterval: 250 * time.Millisecond, Logger: logger})
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); st.Close() })

	s := &site{st: st, org: organizer.New(st.App.Catalog, st.App.Shards)}
	acc, err := st.App.Accounts.SignUp(ctx, "org-e2e@catraca.dev", "organizer-password", "E2E Organizer")
	require.NoError(t, err)
	s.organizer = acc.ID
	s.layout, err = s.org.ImportLayoutAs(ctx, s.organizer, 0, venue.Stadium("Arena Teste", "Rio de Janeiro", 400, 60))
	require.NoError(t, err)

	s.shots = os.Getenv("CATRACA_ARTIFACTS")
	if s.shots == "" {
		s.shots = t.TempDir()
	}
	require.NoError(t, os.MkdirAll(s.shots, 0o755))
	s.chrome = chrome
	s.browser = s.newBrowser(t)
	return s
}

// newBrowser starts a browser process of its own: a second fan with
// other cookies.
func (s *site) newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(s.chrome),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	return alloc
}

// event creates an on-sale event on the test arena.
func (s *site) event(t *testing.T, name string, room bool, holdTTL int) int64 {
	t.Helper()
	return s.eventWith(t, name, room, holdTTL, func(*organizer.EventSpec) {})
}

// eventWith creates an on-sale event with a last change to its spec.
func (s *site) eventWith(t *testing.T, name string, room bool, holdTTL int, change func(*organizer.EventSpec)) int64 {
	t.Helper()
	now := time.Now().UTC()
	spec := organizer.EventSpec{VenueID: s.layout.VenueID, LayoutVersion: s.layout.Version, Name: name, Category: "music",
		Description: "End-to-end test event.", StartsAt: now.Add(72 * time.Hour), SaleStartsAt: now.Add(-time.Minute),
		SaleEndsAt: now.Add(48 * time.Hour), HoldTTL: holdTTL, MaxPerHold: 6, MaxPerAccount: 6,
		PriceLevels: []event.PriceLevel{{Code: "A", Name: "Lower central", PriceCents: 45000}, {Code: "B", Name: "Lower side", PriceCents: 32000},
			{Code: "C", Name: "Upper", PriceCents: 18000}, {Code: "GA", Name: "Floor", PriceCents: 25000}}}
	if room {
		opens := now.Add(-time.Hour)
		spec.SaleStartsAt = now.Add(-2 * time.Second)
		spec.WaitingRoom = event.WaitingRoom{Enabled: true, PrequeueOpensAt: &opens, Ceiling: 1, ActiveTTL: 600, AdmissionTTL: 900}
	}
	change(&spec)
	e, err := s.org.CreateEvent(context.Background(), s.organizer, spec)
	require.NoError(t, err)
	require.NoError(t, s.org.SetStatus(context.Background(), e.ID, "on_sale"))
	return e.ID
}

// tab opens a fresh browser tab (its own cookies are shared per browser, so
// each test uses its own browser process).
func (s *site) tab(t *testing.T) context.Context {
	t.Helper()
	return s.tabOf(t, s.browser)
}

func (s *site) tabOf(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	t.Cleanup(func() { // what the page showed when the test failed
		if t.Failed() {
			last, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if png, err := chromedp.Run(last, chromedp.CaptureScreenshot()); err == nil {
				os.WriteFile(filepath.Join(s.shots, "failed-"+t.Name()+".png"), png, 0o644)
			}
		}
	})
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return ctx
}

// shot saves the whole page, or what a phone's screen shows.
func (s *site) shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	whole := chromedp.FullScreenshot(100)
	if evaluate[int](t, ctx, `window.innerWidth`) < 800 {
		whole = chromedp.CaptureScreenshot()
	}
	s.save(t, ctx, name, whole)
}

// screen saves what the window shows (a dialog over its page), without
// the last notice.
func (s *site) screen(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	evaluate[bool](t, ctx, `((n) => (n.style.transition = 'none', n.className = '', true))(document.getElementById('toast'))`)
	s.save(t, ctx, name, chromedp.CaptureScreenshot())
}

func (s *site) save(t *testing.T, ctx context.Context, name string, capture chromedp.Action[[]byte]) {
	t.Helper()
	png, err := chromedp.Run(ctx, capture)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(s.shots, name+".png"), png, 0o644))
	if *updateDocs && inDocs[name] {
		require.NoError(t, os.WriteFile(filepath.Join(testenv.RepoRoot(), "docs", "screenshots", name+".png"), png, 0o644))
	}
}

func (s *site) signUp(t *testing.T, ctx context.Context, next string) {
	t.Helper()
	email := fmt.Sprintf("fan-%d@catraca.dev", time.Now().UnixNano())
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/signup?next="+next),
		chromedp.WaitVisible(chromedp.CSS(`#f-name`)),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Ana Fan"),
		chromedp.SendKeys(chromedp.CSS(`#f-email`), email),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "a-long-password"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//nav//*[contains(., "Log out")]`),
	))
}

// pay goes from the checkout page through the PSP's hosted page and back
// to the tickets.
func (s *site) pay(t *testing.T, ctx context.Context, shotPrefix string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//p[contains(@class,"countdown") and contains(., "Time left to pay")]`),
	))
	s.shot(t, ctx, shotPrefix+"-checkout")
	accessible(t, ctx, "checkout")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[contains(., "Pay now") or contains(., "Continue to payment")]`),
		chromedp.WaitVisible(chromedp.CSS(`#card`)),
		chromedp.SendKeys(chromedp.CSS(`#card`), "4242 4242 4242 4242"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(`//h1[. = "Your tickets"]`),
		chromedp.WaitVisible(chromedp.CSS(`.ticket svg.qr`)),
	))
	loaded, err := chromedp.Run(ctx, chromedp.Poll[bool](qrDrawn, chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	require.True(t, loaded, "QR codes render")
	s.shot(t, ctx, shotPrefix+"-tickets")
}

// choose picks a quantity on the booking page and submits its form.
func choose(t *testing.T, ctx context.Context, sel, quantity, button string) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(sel), quantity),
		chromedp.Click(`//button[. = "`+button+`"]`),
	))
}

func evaluate[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err)
	return v
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err)
	return out
}

func TestBuyReservedSeatsFromTheMap(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Aurora Tour — Browser", false, 480)
	ctx := s.tab(t)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(s.st.URL+"/?utm_source=test")))
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//a[. = "Aurora Tour — Browser"]`)))
	s.shot(t, ctx, "home")
	accessible(t, ctx, "home")

	s.signUp(t, ctx, fmt.Sprintf("/events/%d", id))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//h1[. = "Aurora Tour — Browser"]`),
	))
	accessible(t, ctx, "event")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[. = "Choose seats"]`),
		chromedp.WaitVisible(chromedp.CSS(`svg.seatmap polygon.section`)),
		chromedp.WaitVisible(`//p[contains(., "Live")]`),
	))
	accessible(t, ctx, "booking")
	require.NoError(t, chromedp.Do(ctx,
		// open a seated section, then pick two seats next to each other
		chromedp.Click(chromedp.CSS(`g[data-section="101"] polygon`)),
		chromedp.WaitVisible(chromedp.CSS(`g[data-section="101"] circle.seat`)),
		chromedp.Click(chromedp.CSS(`g[data-section="101"] circle.seat:not(.taken)`)),
		chromedp.Click(chromedp.CSS(`g[data-section="101"] circle.seat:not(.taken):not(.selected)`)),
		chromedp.WaitVisible(`//button[contains(., "Hold 2 seats")]`),
	))
	s.shot(t, ctx, "seat-map")
	require.Contains(t, text(t, ctx, ".chosen"), "Section 101")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(`//button[contains(., "Hold 2 seats")]`)))
	s.pay(t, ctx, "reserved")
	require.Contains(t, text(t, ctx, ".tickets"), "Section 101")
	require.Contains(t, text(t, ctx, "main"), "Aurora Tour — Browser · ", "the tickets name the event, its date and venue")
	require.Contains(t, text(t, ctx, "main"), "Arena Teste, Rio de Janeiro")
	accessible(t, ctx, "tickets")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[. = "My orders"]`),
		chromedp.WaitVisible(`//h2/a[. = "Aurora Tour — Browser"]`),
	))
	require.Contains(t, text(t, ctx, ".card"), "Arena Teste")
	accessible(t, ctx, "my orders")
}

// booking opens the booking page of a new event (no waiting room) as a
// freshly signed-up fan.
func booking(t *testing.T, name string, holdTTL int) (*site, context.Context) {
	t.Helper()
	s := newSite(t)
	id := s.event(t, name, false, holdTTL)
	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/book", id))
	// The availability's arrival widens the section lists (seats left per
	// section) and moves the buttons beside them: a click computed before
	// it can land beside its button.
	require.NoError(t, chromedp.Do(ctx, mapLive))
	return s, ctx
}

func TestBuyGeneralAdmission(t *testing.T) {
	s, ctx := booking(t, "Floor Party", 480)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//span[contains(., "60 left")]`)))
	choose(t, ctx, "#ga-FLOOR", "3", "Get standing tickets")
	s.pay(t, ctx, "ga")
	n := evaluate[int](t, ctx, `document.querySelectorAll('.ticket').length`)
	require.Equal(t, 3, n, "one ticket per standing place")
}

func TestWaitingRoomAdmitsThenSells(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Waiting Room Night", true, 480)
	first := newAPIFan(t, s.st.URL)
	first.join(t, s.st, id)
	first.waitAdmitted(t, id) // takes the only shopping slot (ceiling 1)

	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	// The edge sends a fan without admission from the booking page to the room.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/book", id)),
		chromedp.WaitVisible(`//h1[starts-with(., "Waiting room")]`),
		chromedp.WaitVisible(`//p[@class="lead" and (contains(., "ahead of you") or contains(., "You are next"))]`),
	))
	path := evaluate[string](t, ctx, `location.pathname`)
	require.Equal(t, fmt.Sprintf("/events/%d/queue", id), path)
	s.shot(t, ctx, "waiting-room")
	accessible(t, ctx, "waiting room")

	first.buyAndLeave(t, id) // frees the slot
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`svg.seatmap`))))
	path = evaluate[string](t, ctx, `location.pathname`)
	require.Equal(t, fmt.Sprintf("/events/%d/book", id), path, "admitted fans move on by themselves")
	choose(t, ctx, "#best-q", "2", "Find best seats")
	s.pay(t, ctx, "admitted")
}

func TestLeavingTheLine(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Leave Early", true, 480)
	first := newAPIFan(t, s.st.URL)
	first.join(t, s.st, id)
	first.waitAdmitted(t, id)

	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/queue", id))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//p[@class="lead" and (contains(., "ahead of you") or contains(., "You are next"))]`),
		chromedp.Click(`//button[. = "Leave the line"]`),
		chromedp.WaitVisible(`//h1[. = "Leave Early"]`),
	))
	require.Equal(t, fmt.Sprintf("/events/%d", id), evaluate[string](t, ctx, `location.pathname`))
	p, err := s.st.App.Room.Progress(context.Background(), id)
	require.NoError(t, err)
	require.Zero(t, p.Waiting, "the fan who left is out of the line")
}

func TestHoldExpiresWhileCheckingOut(t *testing.T) {
	s, ctx := booking(t, "Short Hold", 6)
	require.NoError(t, chromedp.Do(ctx,
		bestReady,
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(`//p[contains(@class,"countdown")]`),
		chromedp.WaitVisible(`//p[@role="alert" and contains(., "Your hold expired")]`),
	))
	s.shot(t, ctx, "hold-expired")
	require.Contains(t, text(t, ctx, "main"), "Nothing was charged")
	disabled := evaluate[bool](t, ctx, `!document.querySelector('.actions button')`)
	require.True(t, disabled, "no pay button once the hold is gone")
}

func TestSoldOutEvent(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Tiny Sold Out", false, 480)
	sellEverything(t, s, id)
	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/book", id))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//p[@role="status" and starts-with(., "Sold out")]`),
		chromedp.WaitVisible(`//span[contains(., "0 left")]`),
		chromedp.Click(`//button[. = "Find best seats"]`),
		chromedp.WaitVisible(`//*[@id="toast" and contains(., "not enough tickets left")]`),
	))
	open := evaluate[int](t, ctx, `document.querySelectorAll('polygon.section.seated:not(.soldout)').length`)
	require.Zero(t, open, "every section shows as sold out")
	require.Contains(t, text(t, ctx, "#pick-s"), "Section 101 · R$450.00 · sold out")
	s.shot(t, ctx, "sold-out")
	require.True(t, strings.Contains(text(t, ctx, "main"), "Unpaid holds come back"))
}

// TestAdmittedToTwoRoomsHoldsAtBoth: one browser admitted to two waiting
// rooms, a tab on each room's booking page, holds in both, whichever room
// admitted it last.
func TestAdmittedToTwoRoomsHoldsAtBoth(t *testing.T) {
	s := newSite(t)
	ids := []int64{s.event(t, "Room One", true, 480), s.event(t, "Room Two", true, 480)}
	first := s.tab(t)
	s.signUp(t, first, "/")
	second, cancel := chromedp.NewContext(first) // another tab of the same browser
	t.Cleanup(cancel)
	tabs := []context.Context{first, second}
	for i, id := range ids { // each room admits at once: nobody else waits
		require.NoError(t, chromedp.Do(tabs[i],
			chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/queue", id)),
			bestReady,
		))
		require.Equal(t, fmt.Sprintf("/events/%d/book", id), evaluate[string](t, tabs[i], `location.pathname`))
	}
	for i, id := range ids {
		require.NoError(t, chromedp.Do(tabs[i],
			chromedp.Click(`//button[. = "Find best seats"]`),
			chromedp.WaitVisible(`//p[contains(@class,"countdown")]`),
		))
		require.True(t, strings.HasPrefix(evaluate[string](t, tabs[i], `location.pathname`), "/orders/"), "held at event %d", id)
	}
}
