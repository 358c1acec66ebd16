package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/apptest"
)

func TestAccounts(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	count := func() int {
		var n int
		require.NoError(t, a.Catalog.QueryRow(context.Background(), `SELECT count(*) FROM accounts`).Scan(&n))
		return n
	}

	good := map[string]any{"email": "Ana@example.com", "password": "correct horse battery", "name": "Ana"}
	r := postJSON(t, srv, "/api/accounts", good)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.NotEmpty(t, r.Body["token"])
	cookie := r.Header.Get("Set-Cookie")
	require.Contains(t, cookie, "catraca_session=")
	require.Contains(t, cookie, "HttpOnly")
	require.Contains(t, cookie, "SameSite=Lax")
	require.NotContains(t, cookie, "Secure", "plain HTTP locally")

	t.Run("duplicate email in any case is 409", func(t *testing.T) {
		dup := map[string]any{"email": "ana@EXAMPLE.com", "password": "another long password", "name": "Ana 2"}
		requireProblem(t, postJSON(t, srv, "/api/accounts", dup), http.StatusConflict, "email-taken")
	})
	t.Run("weak password is 400", func(t *testing.T) {
		weak := map[string]any{"email": "bob@example.com", "password": "short", "name": "Bob"}
		requireProblem(t, postJSON(t, srv, "/api/accounts", weak), http.StatusBadRequest, "invalid-account")
	})
	t.Run("bad email is 400", func(t *testing.T) {
		bad := map[string]any{"email": "not-an-email", "password": "long enough password", "name": "Bob"}
		requireProblem(t, postJSON(t, srv, "/api/accounts", bad), http.StatusBadRequest, "invalid-account")
	})
	t.Run("malformed JSON is 400", func(t *testing.T) {
		r := call(t, srv, http.MethodPost, "/api/accounts", "application/json", strings.NewReader(`{"email": "x@y.z",`))
		requireProblem(t, r, http.StatusBadRequest, "malformed-json")
	})
	t.Run("unknown field is 400", func(t *testing.T) {
		r := postJSON(t, srv, "/api/accounts", map[string]any{"email": "c@example.com", "password": "long enough password", "name": "C", "role": "organizer"})
		requireProblem(t, r, http.StatusBadRequest, "unknown-field")
	})
	t.Run("oversized body is 413", func(t *testing.T) {
		huge := `{"email":"d@example.com","password":"long enough password","name":"` + strings.Repeat("x", 70<<10) + `"}`
		r := call(t, srv, http.MethodPost, "/api/accounts", "application/json", strings.NewReader(huge))
		requireProblem(t, r, http.StatusRequestEntityTooLarge, "body-too-large")
	})
	t.Run("wrong content type is 415", func(t *testing.T) {
		r := call(t, srv, http.MethodPost, "/api/accounts", "text/plain", strings.NewReader(`{}`))
		requireProblem(t, r, http.StatusUnsupportedMediaType, "unsupported-media-type")
	})
	require.Equal(t, 1, count(), "rejected sign-ups write nothing")

	t.Run("log in", func(t *testing.T) {
		r := postJSON(t, srv, "/api/session", map[string]any{"email": "ana@example.com", "password": "correct horse battery"})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Contains(t, r.Header.Get("Set-Cookie"), "catraca_session=")
	})
	t.Run("wrong password is 401", func(t *testing.T) {
		r := postJSON(t, srv, "/api/session", map[string]any{"email": "ana@example.com", "password": "wrong horse battery"})
		requireProblem(t, r, http.StatusUnauthorized, "invalid-credentials")
	})
	t.Run("unknown email is 401 too", func(t *testing.T) {
		r := postJSON(t, srv, "/api/session", map[string]any{"email": "nobody@example.com", "password": "wrong horse battery"})
		requireProblem(t, r, http.StatusUnauthorized, "invalid-credentials")
	})
	t.Run("log out clears the cookie", func(t *testing.T) {
		r := call(t, srv, http.MethodDelete, "/api/session", "", nil)
		require.Equal(t, http.StatusNoContent, r.Status)
		require.Contains(t, r.Header.Get("Set-Cookie"), "Max-Age=0")
	})
	t.Run("unknown route is problem JSON", func(t *testing.T) {
		requireProblem(t, call(t, srv, http.MethodGet, "/api/nope", "", nil), http.StatusNotFound, "not-found")
	})
}

func TestHealth(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 2)
	srv := serve(t, a)
	r := call(t, srv, http.MethodGet, "/healthz", "", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["checks"], 4, "catalog, two shards and Redis")
	require.EqualValues(t, 0, r.Body["outbox_dead"], "no outbox message set aside")
}
