package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/demo"
)

// logInOrganizer makes the site's organizer account an organizer and logs
// it in through the log-in page, landing on next.
func (s *site) logInOrganizer(t *testing.T, ctx context.Context, next string) {
	t.Helper()
	require.NoError(t, pgstore.New(s.st.App.Catalog).SetRole(context.Background(), s.organizer, account.RoleOrganizer))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/login?next="+next),
		chromedp.WaitVisible(chromedp.CSS(`#f-email`)),
		chromedp.SendKeys(chromedp.CSS(`#f-email`), "org-e2e@catraca.dev"),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "organizer-password"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//nav//*[contains(., "Log out")]`),
	))
}

// consoleShot saves a screenshot of a console page without the last
// notice, which would cover the form.
func (s *site) consoleShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	evaluate[bool](t, ctx, `((n) => (n.style.transition = 'none', n.className = '', true))(document.getElementById('toast'))`)
	s.shot(t, ctx, name)
}

// The console is behind the organizer role at the edge: a fan's session
// is told the account is not an organizer (not sent to a log-in page that
// looks like a failed log-in) and can switch accounts from there; an
// organizer finds the console in the account menu.
func TestConsoleIsForOrganizers(t *testing.T) {
	s := newSite(t)
	s.event(t, "Console Night", false, 480)
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/organizer/events"),
		chromedp.WaitVisible(`//h1[. = "This account is not an organizer"]`),
	))
	require.Equal(t, "/not-an-organizer", evaluate[string](t, ctx, `location.pathname`))
	require.Contains(t, text(t, ctx, `main`), "You are logged in as fan-", "the page names the account")
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('#nav a[href="/organizer"]').length`), "fans have no console link")
	accessible(t, ctx, "not an organizer")

	// A fan whose page was loaded past the edge (or whose role was taken
	// away) gets the same page from the API's refusal.
	evaluate[bool](t, ctx, `(history.pushState(null, '', '/organizer/venues'), dispatchEvent(new PopStateEvent('popstate')))`)
	moved, err := chromedp.Run(ctx, chromedp.Poll[bool](`location.pathname + location.search === '/not-an-organizer?next=%2Forganizer%2Fvenues'`,
		chromedp.WithPollingTimeout(20*time.Second)))
	require.NoError(t, err)
	require.True(t, moved)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(`//h1[. = "This account is not an organizer"]`)))

	// Switching to an organizer account leads back to the console.
	require.NoError(t, pgstore.New(s.st.App.Catalog).SetRole(context.Background(), s.organizer, account.RoleOrganizer))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Log in with another account"]`),
		chromedp.WaitVisible(`//h1[. = "Log in"]`),
		chromedp.SendKeys(chromedp.CSS(`#f-email`), "org-e2e@catraca.dev"),
		chromedp.SendKeys(chromedp.CSS(`#f-password`), "organizer-password"),
		chromedp.Click(chromedp.CSS(`form button[type=submit]`)),
		chromedp.WaitVisible(`//h1[. = "Venues"]`),
	))

	org := s.tabOf(t, s.newBrowser(t))
	s.logInOrganizer(t, org, "/")
	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//nav//a[. = "Organizer console"]`),
		chromedp.WaitVisible(`//h1[. = "Events"]`),
		chromedp.WaitVisible(`//th[. = "Console Night"]`),
	))
	accessible(t, org, "console events")
	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//nav[@aria-label="Organizer console"]//a[. = "Venues"]`),
		chromedp.WaitVisible(`//h1[. = "Venues"]`),
	))
}

// An edit saved after the event changed elsewhere (the control room's
// ceiling) is refused: the form says what changed, keeps what was typed,
// and reloads only when asked.
func TestStaleEditIsExplainedAndKeepsTypedValues(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Stale Night", true, 480)
	ctx := s.tab(t)
	s.logInOrganizer(t, ctx, fmt.Sprintf("/organizer/events/%d", id))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//h1[. = "Stale Night"]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-ceiling`)),
	))
	ceiling := 300 // the control room's change, made while the form is open
	_, err := s.org.SetAdmission(context.Background(), s.organizer, id, nil, organizer.Admission{Ceiling: &ceiling})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#f-name`), "Stale Night, late show"),
		chromedp.Click(`//button[. = "Save changes"]`),
		chromedp.WaitVisible(`//p[strong[. = "Not saved: this event changed since you opened it."]]`),
	))
	require.Contains(t, text(t, ctx, `.event-form .notice`), "The waiting room's ceiling changed: now 300.")
	require.Equal(t, "Stale Night, late show", evaluate[string](t, ctx, `document.getElementById('f-name').value`), "the typed name stays")
	e, err := s.st.App.Events.Get(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "Stale Night", e.Name, "nothing saved")
	require.Equal(t, 300, e.WaitingRoom.Ceiling, "the control room's ceiling stands")
	accessible(t, ctx, "stale edit")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Reload the event (discards your changes)"]`),
		chromedp.WaitNotPresent(`//p[strong[. = "Not saved: this event changed since you opened it."]]`),
		chromedp.WaitVisible(chromedp.CSS(`#f-ceiling`)), // the page drawn again
	))
	require.Equal(t, "300", evaluate[string](t, ctx, `document.getElementById('f-ceiling').value`))
	require.Equal(t, "Stale Night", evaluate[string](t, ctx, `document.getElementById('f-name').value`))
}

// seatCSV is a small hall as a venue hands it over: two sections of two
// rows of ten seats.
func seatCSV() string {
	var b strings.Builder
	b.WriteString("section,row,seat,x,y,price_level\n")
	for si, sec := range []string{"101", "102"} {
		for ri, row := range []string{"A", "B"} {
			for n := 1; n <= 10; n++ {
				fmt.Fprintf(&b, "%s,%s,%d,%d,%d,%s\n", sec, row, n, 10+si*70+n*5, 20+ri*6, []string{"A", "B"}[si])
			}
		}
	}
	return b.String()
}

// Importing a seat list with one bad line shows the mistake beside that
// line; fixed, it previews on the seat map and saves as a venue.
func TestImportVenueFromCSV(t *testing.T) {
	s := newSite(t)
	ctx := s.tab(t)
	s.logInOrganizer(t, ctx, "/organizer/venues")
	good := seatCSV()
	bad := strings.Replace(good, "101,A,3,25,20,A", "101,A,three,25,20,A", 1) // line 4
	dir := t.TempDir()
	badPath, goodPath := filepath.Join(dir, "hall-bad.csv"), filepath.Join(dir, "hall.csv")
	require.NoError(t, os.WriteFile(badPath, []byte(bad), 0o644))
	require.NoError(t, os.WriteFile(goodPath, []byte(good), 0o644))

	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//h1[. = "Venues"]`),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Teatro do Parque"),
		chromedp.SendKeys(chromedp.CSS(`#f-city`), "Recife"),
		chromedp.SetUploadFiles(chromedp.CSS(`#f-file`), []string{badPath}),
		chromedp.Click(`//button[. = "Check and preview"]`),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-line="4"]`)),
	))
	row := text(t, ctx, `tr[data-line="4"]`)
	require.Contains(t, row, "101,A,three,25,20,A", "the bad line's own text")
	require.Contains(t, row, `seat must be a whole number from 0 to 2147483647, not "three"`)
	require.Equal(t, 1, evaluate[int](t, ctx, `document.querySelectorAll('tr[data-line]').length`), "only the bad line")
	s.consoleShot(t, ctx, "console-venue-errors")
	accessible(t, ctx, "venue import errors")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS(`#f-file`), []string{goodPath}),
		chromedp.Click(`//button[. = "Check and preview"]`),
		chromedp.WaitVisible(chromedp.CSS(`.preview svg.seatmap polygon.section`)),
	))
	require.Contains(t, text(t, ctx, ".preview"), "2 sections, 40 seats")
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('tr[data-line]').length`), "the errors are gone")
	s.consoleShot(t, ctx, "console-venue-preview")
	accessible(t, ctx, "venue preview")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Save layout"]`),
		chromedp.WaitVisible(`//li[contains(@class, "card")]//h3[. = "Teatro do Parque"]`),
	))
	require.Contains(t, text(t, ctx, ".versions"), "Version 1: 40 seats")
}

// An organizer creates an event on their venue as a draft, publishes it,
// opens its sale and edits it; fans buy; cancelling it refunds their orders while a
// progress bar counts them.
func TestCreateEventAndOpenItsSale(t *testing.T) {
	s := newSite(t)
	ctx := s.tab(t)
	_, err := s.org.ImportLayoutAs(context.Background(), s.organizer, 0, venue.Stadium("Arena do Organizador", "Salvador", 200, 40))
	require.NoError(t, err)
	s.logInOrganizer(t, ctx, "/organizer/events")
	day := time.Now().Add(20 * 24 * time.Hour).Format("2006-01-02")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//h1[. = "Events"]`),
		chromedp.Click(`//a[. = "New event"]`),
		chromedp.WaitVisible(chromedp.CSS(`input[name="price-GA"]`)),
		chromedp.SendKeys(chromedp.CSS(`#f-name`), "Noite de Forró"),
		chromedp.SetValue(chromedp.CSS(`#f-starts_at`), day+"T21:00"),
		chromedp.SetValue(chromedp.CSS(`#f-sale_starts_at`), time.Now().Add(-time.Hour).Format("2006-01-02T15:04")),
		chromedp.SetValue(chromedp.CSS(`#f-sale_ends_at`), day+"T20:00"),
		chromedp.SetValue(chromedp.CSS(`input[name="price-A"]`), "180"),
		chromedp.SetValue(chromedp.CSS(`input[name="price-B"]`), "120"),
		chromedp.SetValue(chromedp.CSS(`input[name="price-C"]`), "80"),
		chromedp.SetValue(chromedp.CSS(`input[name="price-GA"]`), "60"),
		chromedp.SetValue(chromedp.CSS(`input[name="color-GA"]`), "#bc4c00"),
	))
	s.consoleShot(t, ctx, "console-event-new")
	accessible(t, ctx, "new event")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Create draft"]`),
		chromedp.WaitVisible(`//h1[. = "Noite de Forró"]`),
		chromedp.WaitVisible(`//span[contains(@class, "tag") and . = "Draft"]`),
		chromedp.WaitVisible(`//p[contains(., "Its sale window started") and contains(., "publishing opens the sale at once")]`),
		chromedp.Click(`//button[. = "Publish"]`),
	))
	// Its sale window started an hour ago: published, it is on sale at once,
	// saying so over the old "Draft created".
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(wait,
		chromedp.WaitVisible(`//*[@id="toast" and . = "Published and on sale: fans can buy now."]`),
		chromedp.WaitVisible(`//span[contains(@class, "tag") and . = "On sale"]`),
		chromedp.WaitVisible(`//button[. = "Pause sale"]`),
	), "the page said: %s", text(t, ctx, "main"))
	require.Zero(t, evaluate[int](t, ctx, `[...document.querySelectorAll('button')].filter((b) => b.textContent === 'Open sale').length`),
		"no second step to open the sale")
	s.consoleShot(t, ctx, "console-event")
	accessible(t, ctx, "event page")
	id := evaluate[string](t, ctx, `location.pathname.split('/').pop()`)
	var eventID int64
	fmt.Sscan(id, &eventID)
	e, err := s.st.App.Events.Get(context.Background(), eventID)
	require.NoError(t, err)
	require.Equal(t, event.OnSale, e.Status)
	require.True(t, e.OnSale(time.Now()), "fans can buy")
	for _, p := range e.PriceLevels {
		if p.Code == "GA" {
			require.Equal(t, 6000, p.PriceCents)
			require.Equal(t, "#bc4c00", p.Color)
		}
	}

	// Edit: a larger per-account limit and a new name, saved from the form.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(chromedp.CSS(`#f-name`), "Noite de Forró — extra"),
		chromedp.SetValue(chromedp.CSS(`#f-max_per_account`), "8"),
		chromedp.Click(`//button[. = "Save changes"]`),
		chromedp.WaitVisible(`//h1[. = "Noite de Forró — extra"]`),
	))
	e, err = s.st.App.Events.Get(context.Background(), eventID)
	require.NoError(t, err)
	require.Equal(t, 8, e.MaxPerAccount)
	require.Equal(t, event.OnSale, e.Status, "editing leaves the sale open")

	paid, err := demo.Sell(context.Background(), s.st.URL, eventID, 2)
	require.NoError(t, err)
	require.Equal(t, 2, paid)
	evaluate[bool](t, ctx, `(window.confirm = () => true, true)`) // the cancel button asks first
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[. = "Cancel event…"]`),
		chromedp.WaitVisible(`//span[contains(@class, "tag") and . = "Cancelled"]`),
		chromedp.WaitVisible(`//p[@id = "refund-label" and contains(., "2 of 2 orders refunded, 0 left")]`),
	))
	require.Equal(t, 2, evaluate[int](t, ctx, `document.querySelector('.refunds progress').value`))
	s.consoleShot(t, ctx, "console-refunds")
	accessible(t, ctx, "refunds")
}
