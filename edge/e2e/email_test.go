package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

// TestFanVerifiesTheirEmail: a fan signs up, opens the link of the mail
// the sign-up sent, and the page says the email is verified. A link that
// is not valid says so and offers a new one, which the fan asks for.
// axe-core finds no violation.
func TestFanVerifiesTheirEmail(t *testing.T) {
	mailbox := t.TempDir()
	s := newSiteWith(t, func(c *config.Config) { c.Mailbox = mailbox })
	ctx := s.tab(t)
	s.signUp(t, ctx, "/")
	mails, err := filepath.Glob(filepath.Join(mailbox, "verify-*.txt"))
	require.NoError(t, err)
	require.Len(t, mails, 1, "the sign-up mailed a link")
	b, err := os.ReadFile(mails[0])
	require.NoError(t, err)
	link := regexp.MustCompile(`/verify-email\?token=[A-Za-z0-9_.-]+`).Find(b)
	require.NotNil(t, link, "a link in %s", b)

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+string(link)),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "is verified")]`),
	))
	accessible(t, ctx, "email verified")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+"/verify-email?token=not-a-link"),
		chromedp.WaitVisible(`//p[@role="alert" and contains(., "not valid or has expired")]`),
		chromedp.Click(`//button[contains(., "Mail me a new link")]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "A new link is on its way")]`),
	))
	accessible(t, ctx, "a link that is not valid")
}
