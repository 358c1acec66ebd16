package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
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

// The console is behind the organizer role at the edge: a fan's session
// goes to the log-in page; an organizer finds it in the account menu.
func TestConsoleIsForOrganizers(t *testing.T) {
	s := newSite(t)
	s.event(t, "Console Night", false, 480)
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/organizer/events"),
		chromedp.WaitVisible(`//h1[. = "Log in"]`),
	))
	require.Equal(t, "/login", evaluate[string](t, ctx, `location.pathname`))
	require.Zero(t, evaluate[int](t, ctx, `document.querySelectorAll('#nav a[href="/organizer"]').length`), "fans have no console link")

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
