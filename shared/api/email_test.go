package api_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
)

// verificationLink is the token of the email verification link in an
// account's sign-up mail.
func verificationLink(t *testing.T, mailbox string, account int64) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mailbox, "verify-"+itoa(account)+".txt"))
	require.NoError(t, err, "the sign-up mails a verification link")
	m := regexp.MustCompile(`/verify-email\?token=([A-Za-z0-9_.-]+)`).FindSubmatch(b)
	require.NotNil(t, m, "a link in %s", b)
	return string(m[1])
}

// TestVerifiedEmailIsASignalOfTheJoin: sign-up mails a link that verifies
// the account's email; the session says whether it is verified, and the
// join's risk score counts an unverified one (here the threshold is 2: an
// old account joining without a device cookie is challenged only while
// its email is unverified). A session token or another account's link
// verifies nothing; the flag survives a new log-in.
func TestVerifiedEmailIsASignalOfTheJoin(t *testing.T) {
	t.Parallel()
	mailbox := t.TempDir()
	a, srv, room := doorRoom(t, func(c *config.Config) { c.Mailbox, c.ChallengeThreshold = mailbox, 2 })
	verify := "/api/accounts/email-verification"

	ana, anaID := apiFan(t, srv, "ana@example.com")
	_, err := a.Catalog.Exec(context.Background(), `UPDATE accounts SET created_at = now() - interval '30 days' WHERE id = $1`, anaID)
	require.NoError(t, err)
	r := ana.do(http.MethodPost, "/api/session", map[string]any{"email": "ana@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, false, r.Body["account"].(map[string]any)["email_verified"])
	ana.header.Set("Authorization", "Bearer "+r.Body["token"].(string))
	r = ana.do(http.MethodPost, room, nil)
	challengeOf(t, r)
	require.Equal(t, "unverified-email,no-device", r.Body["risk"])

	// Neither a session token nor a made-up one verifies.
	requireProblem(t, ana.do(http.MethodPost, verify, map[string]any{"token": r.Body["challenge"].(map[string]any)["token"]}),
		http.StatusUnprocessableEntity, "invalid-verification")
	requireProblem(t, ana.do(http.MethodPost, verify, map[string]any{"token": ana.header.Get("Authorization")[7:]}),
		http.StatusUnprocessableEntity, "invalid-verification")

	r = ana.do(http.MethodPost, verify, map[string]any{"token": verificationLink(t, mailbox, anaID)})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, true, r.Body["account"].(map[string]any)["email_verified"])
	ana.header.Set("Authorization", "Bearer "+r.Body["token"].(string)) // the session, issued again, says so
	r = ana.do(http.MethodPost, room, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))

	// Bia's link verifies Bia, whoever sends it; the flag stays at log-in.
	bia, biaID := apiFan(t, srv, "bia@example.com")
	r = ana.do(http.MethodPost, verify, map[string]any{"token": verificationLink(t, mailbox, biaID)})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "bia@example.com", r.Body["account"].(map[string]any)["email"])
	require.NotContains(t, r.Body, "token", "no session for Ana's client")
	r = bia.do(http.MethodPost, "/api/session", map[string]any{"email": "bia@example.com", "password": "a long enough password"})
	require.Equal(t, true, r.Body["account"].(map[string]any)["email_verified"])
}
