package challenge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// siteverifyServer answers as a provider's siteverify endpoint does,
// with answer, and keeps the forms it was posted.
func siteverifyServer(t *testing.T, status int, answer map[string]any) (*httptest.Server, func() []url.Values) {
	t.Helper()
	var mu sync.Mutex
	var forms []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		mu.Lock()
		forms = append(forms, r.PostForm)
		mu.Unlock()
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []url.Values { mu.Lock(); defer mu.Unlock(); return forms }
}

// The hosted CAPTCHA port against a stand-in for the provider: the form
// carries the secret, the widget's token and the viewer's address; a
// failed check, a Turnstile token passed for another account or event, or
// one with no binding at all is refused; a provider that fails is
// unavailable, not a refusal.
func TestHostedCaptchaAsksTheProvider(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := Subject{Account: 7, Event: 42, RemoteIP: "203.0.113.9"}
	answer := Answer{Solution: "widget-token"}
	hosted := func(url string) *Hosted {
		return &Hosted{Kind: KindTurnstile, SiteKey: "site", Secret: "shh", VerifyURL: url}
	}

	srv, forms := siteverifyServer(t, http.StatusOK, map[string]any{"success": true, "cdata": "7.42"})
	require.NoError(t, hosted(srv.URL).Verify(ctx, s, answer))
	f := forms()[0]
	require.Equal(t, []string{"shh", "widget-token", "203.0.113.9"}, []string{f.Get("secret"), f.Get("response"), f.Get("remoteip")})
	requireRefused(t, hosted(srv.URL).Verify(ctx, s, Answer{}), ReasonInvalid)
	require.Len(t, forms(), 1, "an empty answer is not sent on")

	srv, _ = siteverifyServer(t, http.StatusOK, map[string]any{"success": false, "error-codes": []string{"invalid-input-response"}})
	requireRefused(t, hosted(srv.URL).Verify(ctx, s, answer), ReasonInvalid)
	srv, _ = siteverifyServer(t, http.StatusOK, map[string]any{"success": true, "cdata": "8.42"})
	requireRefused(t, hosted(srv.URL).Verify(ctx, s, answer), ReasonWrongSubject)
	// A token solved with no cdata is bound to nobody: a CAPTCHA farm's
	// tokens would serve any account.
	srv, _ = siteverifyServer(t, http.StatusOK, map[string]any{"success": true})
	requireRefused(t, hosted(srv.URL).Verify(ctx, s, answer), ReasonWrongSubject)
	// hCaptcha has no cdata: its binding is the token's single use.
	h := hosted(srv.URL)
	h.Kind = KindHCaptcha
	require.NoError(t, h.Verify(ctx, s, answer))

	srv, _ = siteverifyServer(t, http.StatusInternalServerError, map[string]any{})
	require.True(t, errors.Is(hosted(srv.URL).Verify(ctx, s, answer), ErrUnavailable))
}
