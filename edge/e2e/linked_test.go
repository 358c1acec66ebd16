package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/tools/fan"
)

// TestOrganizerBlocksALinkedAccount: two buyers seen on one device are a
// cluster on the console's linked-accounts page, with the shared device as
// evidence; the organizer blocks one, saying why in the dialog, and the
// audit log shows it with who did it. The page has no axe-core violation,
// before and after.
func TestOrganizerBlocksALinkedAccount(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Linked Night", false, 480)
	ctx := context.Background()
	stamp := time.Now().UnixNano()
	device := fairness.NewDeviceID()
	var ids []int64
	for _, name := range []string{"Lia Linked", "Leo Linked"} {
		buyer := apiFan{fan.New(s.st.URL, nil)}
		email := fmt.Sprintf("linked-%d-%d@catraca.dev", len(ids), stamp)
		require.NoError(t, buyer.SignUp(ctx, email, "a-long-password", name))
		buyer.buy(t, id)
		var account int64
		require.NoError(t, s.st.App.Catalog.QueryRow(ctx, `SELECT id FROM accounts WHERE email = $1`, email).Scan(&account))
		// Both logged in on one phone (what the device cookie records).
		_, err := s.st.App.Fairness.SeenDevice(ctx, account, device)
		require.NoError(t, err)
		ids = append(ids, account)
	}

	org := s.tabOf(t, s.newBrowser(t))
	s.logInOrganizer(t, org, "/organizer/linked")
	err := chromedp.Do(org,
		chromedp.WaitVisible(`//h1[. = "Linked accounts"]`),
		chromedp.WaitVisible(`//h3[starts-with(., "Cluster of 2 accounts")]`),
		chromedp.WaitVisible(`//li[starts-with(., "One device (`+device[:8]+`…) used by Lia Linked")]`),
		chromedp.WaitVisible(`//h2[. = "Audit log"]/following-sibling::p[. = "Nothing done yet."]`),
	)
	require.NoError(t, err, "the page reads:\n%s", evaluate[string](t, org, `document.body.innerText`))
	accessible(t, org, "linked accounts")
	s.consoleShot(t, org, "linked-accounts")

	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//tr[th[contains(., "Leo Linked")]]//button[contains(., "Block")]`),
		chromedp.WaitVisible(`//dialog//h2[starts-with(., "Block Leo Linked")]`),
		chromedp.SendKeys(`//dialog//textarea`, "same phone as Lia, 2 accounts"),
		chromedp.Click(`//dialog//button[. = "Block"]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "is blocked.")]`),
		chromedp.WaitVisible(`//tr[th[contains(., "Leo Linked")]]//span[. = "Blocked"]`),
		chromedp.WaitVisible(`//table//td[. = "same phone as Lia, 2 accounts"]`),
		chromedp.WaitVisible(`//table//td[starts-with(., "Blocked linked-1-")]`),
	))
	accessible(t, org, "linked accounts after a block")
	var blocked int
	require.NoError(t, s.st.App.Catalog.QueryRow(ctx, `SELECT count(*) FROM account_blocks WHERE account = $1`, ids[1]).Scan(&blocked))
	require.Equal(t, 1, blocked)
}
