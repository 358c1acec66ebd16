package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/dev/apptest"
)

// Attacks of an outsider and a confused fan through the public API.

// An email address written with look-alike characters is refused, naming
// the address it looks like: PostgreSQL's lower() folds the Kelvin sign
// (U+212A) to "k", so "\u212Aate@example.com" took kate@example.com's place
// (her sign-up answered "already exists", her email logged into the
// squatter's account), and fullwidth or mixed-alphabet addresses read as
// someone else's in the organizer's search and exports.
func TestEmailsWithLookAlikeCharactersAreRefused(t *testing.T) {
	t.Parallel()
	srv := serve(t, apptest.New(t, 1))
	signUp := func(email string) response {
		return newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": "a long enough password", "name": "Fan"})
	}
	for email, detail := range map[string]string{
		"\u212Aate@example.com":      "Invalid account data: \"\u212Aate@example.com\" has characters that only look like letters (U+212A); type it as \"Kate@example.com\".",
		"\uff54\uff41bs@example.com": "Invalid account data: \"\uff54\uff41bs@example.com\" has characters that only look like letters (U+FF54, U+FF41); type it as \"tabs@example.com\".",
		"ana@\u212Bngstrom.com":      "Invalid account data: \"ana@\u212Bngstrom.com\" has characters that only look like letters (U+212B); type it as \"ana@\u00c5ngstrom.com\".",
		"t\u0430bs@example.com":      "Invalid account data: \"t\u0430bs@example.com\" mixes letters of different alphabets in \"t\u0430bs\"; type the address again.",
		"tabs@ex\u0430mple.com":      "Invalid account data: \"tabs@ex\u0430mple.com\" mixes letters of different alphabets in \"ex\u0430mple\"; type the address again.",
		"\u03bf\u03b1@example.com":   "",
	} {
		r := signUp(email)
		if detail == "" {
			require.Equal(t, http.StatusCreated, r.Status, "%q: one alphabet per word is an address: %s", email, r.Raw)
			continue
		}
		requireRefusal(t, r, http.StatusBadRequest, "invalid-account", detail, "/email")
	}
	require.Equal(t, http.StatusCreated, signUp("kate@example.com").Status, "nobody took her address")
	require.Equal(t, http.StatusCreated, signUp("jo\u00e3o@example.com").Status, "accented Latin is one alphabet")
}
