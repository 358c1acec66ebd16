package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/edgekeys"
	"github.com/catraca/catraca/shared/token"
)

type fixture struct {
	gw        *Gateway
	kvs       *KVS
	keys      func(gated ...int64) // publishes the keys and these gated events
	session   *token.Signer
	admission *token.Signer
	calls     atomic.Int64
	last      atomic.Value // *http.Request seen by the origin
}

func newFixture(t *testing.T, origin http.HandlerFunc) *fixture {
	t.Helper()
	sk := []config.Key{{ID: "s1", Secret: []byte("0123456789abcdef0123456789abcdef")}}
	ak := []config.Key{{ID: "a1", Secret: []byte("fedcba9876543210fedcba9876543210")}}
	f := &fixture{kvs: NewKVS(edgekeys.Entries(sk, ak, nil))}
	f.keys = func(gated ...int64) { f.kvs.Sync(context.Background(), edgekeys.Entries(sk, ak, gated)) }
	var err error
	f.session, err = token.NewSigner(token.AudienceSession, sk)
	require.NoError(t, err)
	f.admission, err = token.NewSigner(token.AudienceAdmission, ak)
	require.NoError(t, err)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		f.last.Store(r.Clone(r.Context()))
		origin(w, r)
	})
	f.gw, err = New(f.kvs, api, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	return f
}

func (f *fixture) do(t *testing.T, method, target string, cookies map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for k, v := range cookies {
		r.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	w := httptest.NewRecorder()
	f.gw.ServeHTTP(w, r)
	return w
}

func ok(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) }

func TestGatewayRunsTheEdgeFunction(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ok)
	f.keys(7)
	sess, _, err := f.session.Issue(token.Claims{Account: 42, Role: "fan"}, time.Hour)
	require.NoError(t, err)

	w := f.do(t, "GET", "/api/me/orders", nil)
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Equal(t, "application/problem+json", w.Header().Get("Content-Type"))
	require.Zero(t, f.calls.Load(), "a refused request must not reach the origin")
	var unauth map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &unauth))
	require.Equal(t, "/api/me/orders", unauth["instance"])
	require.NotEmpty(t, unauth["request_id"], "CloudFront gives every viewer request an id")

	require.Equal(t, http.StatusOK, f.do(t, "GET", "/api/me/orders", map[string]string{"catraca_session": sess}).Code)

	w = f.do(t, "POST", "/api/events/7/holds", map[string]string{"catraca_session": sess})
	require.Equal(t, http.StatusForbidden, w.Code)
	var p map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p))
	require.Equal(t, "/api/events/7/queue", p["queue"])

	adm, _, err := f.admission.Issue(token.Claims{Account: 42, Event: 7}, time.Minute)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, f.do(t, "POST", "/api/events/7/holds", map[string]string{"catraca_session": sess, "catraca_admission_7": adm}).Code)
	other, _, err := f.admission.Issue(token.Claims{Account: 43, Event: 7}, time.Minute)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, f.do(t, "POST", "/api/events/7/holds", map[string]string{"catraca_session": sess, "catraca_admission_7": other}).Code)

	f.keys() // the room closed: a session is enough
	require.Equal(t, http.StatusOK, f.do(t, "POST", "/api/events/7/holds", map[string]string{"catraca_session": sess}).Code)

	w = f.do(t, "GET", "/events/7/book", nil)
	require.Equal(t, http.StatusFound, w.Code)
	require.True(t, strings.HasPrefix(w.Header().Get("Location"), "/login?next="))
}

func TestGatewayNormalizesQueriesAndServesTheSite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ok)
	w := f.do(t, "GET", "/api/events?utm_source=mail&limit=5&city=Rio&fbclid=x", nil)
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, "city=Rio&limit=5", f.last.Load().(*http.Request).URL.RawQuery)
	// The query reaches the API as sent: a malformed escape was dropped
	// (?limit=%zz read as the default page) instead of refused there.
	f.do(t, "GET", "/api/events?limit=%zz&q=a%20b&city=Rio&city=S%C3%A3o+Paulo", nil)
	require.Equal(t, "city=Rio&city=S%C3%A3o+Paulo&limit=%zz&q=a%20b", f.last.Load().(*http.Request).URL.RawQuery)
	require.Contains(t, w.Header().Get("Content-Security-Policy"), "frame-ancestors 'none'")
	require.NotEmpty(t, w.Header().Get("Strict-Transport-Security"))
	require.Equal(t, "DENY", w.Header().Get("X-Frame-Options"))

	page := f.do(t, "GET", "/events/3", nil)
	require.Equal(t, http.StatusOK, page.Code)
	require.Contains(t, page.Body.String(), "<!doctype html>")
	require.Equal(t, "no-cache", page.Header().Get("Cache-Control"))
	require.Equal(t, http.StatusForbidden, f.do(t, "GET", "/nope.js", nil).Code)
}

func TestGatewayCollapsesMissesAndHonoursCacheControl(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/progress"):
			<-release // hold the origin so every viewer arrives during the miss
			w.Header().Set("Cache-Control", "public, max-age=1")
		case strings.HasSuffix(r.URL.Path, "/availability"):
			require.Empty(t, r.Header.Get("Cookie"), "cached behaviors forward no cookies")
			w.Header().Set("Cache-Control", "private, no-store")
		}
		w.Write([]byte(r.URL.Path))
	})
	var wg sync.WaitGroup
	hits := atomic.Int64{}
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := f.do(t, "GET", "/api/events/7/queue/progress?utm_campaign=x", nil)
			if w.Header().Get("X-Cache") == "Hit from cloudfront" {
				hits.Add(1)
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	close(release)
	wg.Wait()
	require.Equal(t, int64(1), f.calls.Load(), "100 concurrent misses on one key reach the origin once")
	require.Equal(t, int64(99), hits.Load())
	f.do(t, "GET", "/api/events/7/queue/progress", nil)
	require.Equal(t, int64(1), f.calls.Load(), "served from cache within max-age")

	f.do(t, "GET", "/api/events/7/availability", map[string]string{"catraca_session": "x"})
	f.do(t, "GET", "/api/events/7/availability", nil)
	require.Equal(t, int64(3), f.calls.Load(), "no-store responses are not cached")
}

func TestTTLFollowsCloudFrontRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cc   string
		want time.Duration
		ok   bool
	}{
		{"public, max-age=1", time.Second, true},
		{"public, max-age=60, s-maxage=2", 2 * time.Second, true},
		{"public, max-age=600", 5 * time.Second, true}, // clamped to MaxTTL
		{"no-store", 0, false},
		{"private, max-age=60", 0, false},
		{"", 3 * time.Second, true}, // DefaultTTL
	} {
		got, ok := ttlOf(c.cc, 0, 5*time.Second, 3*time.Second)
		require.Equal(t, c.ok, ok, c.cc)
		require.Equal(t, c.want, got, c.cc)
	}
}

func TestGatewayKeysOnAcceptedEncoding(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=1")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
		}
		w.Write([]byte(r.Header.Get("Accept-Encoding")))
	})
	get := func(enc string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/api/events/7/availability", nil)
		if enc != "" {
			r.Header.Set("Accept-Encoding", enc)
		}
		w := httptest.NewRecorder()
		f.gw.ServeHTTP(w, r)
		return w
	}
	require.Equal(t, "gzip", get("gzip").Header().Get("Content-Encoding"))
	require.Empty(t, get("").Header().Get("Content-Encoding"), "a viewer that cannot gunzip never gets the gzip copy")
	require.Equal(t, "gzip", get("gzip, deflate, br").Header().Get("Content-Encoding"))
	require.Equal(t, int64(2), f.calls.Load(), "one cached copy per encoding")
}

// The API's OpenAPI document needs no log-in and is cached at the edge.
func TestGatewayServesTheAPIDocumentFromCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Write([]byte(`{"openapi":"3.1.0"}`))
	})
	for range 2 {
		w := f.do(t, "GET", "/api/openapi.json", nil)
		require.Equal(t, http.StatusOK, w.Code)
		require.JSONEq(t, `{"openapi":"3.1.0"}`, w.Body.String())
	}
	require.Equal(t, int64(1), f.calls.Load(), "the second viewer is served from the edge cache")
}

// Issue 15 item 18: /healthz reaches the API; writes to the site and
// non-canonical API paths are problem JSON, decided at the edge.
func TestGatewayRoutesHealthAndRefusesOddRequests(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ok)
	w := f.do(t, "GET", "/healthz", nil)
	require.Equal(t, http.StatusOK, w.Code)
	require.JSONEq(t, `{"ok":true}`, w.Body.String())
	require.Equal(t, "/healthz", f.last.Load().(*http.Request).URL.Path)

	for _, c := range []struct {
		method, target string
		status         int
	}{
		{"POST", "/index.html", http.StatusMethodNotAllowed},
		{"PUT", "/events/3", http.StatusMethodNotAllowed},
		{"GET", "/api//events", http.StatusNotFound},
		{"GET", "/api/./events", http.StatusNotFound},
		{"GET", "/api/events/01", http.StatusNotFound},
	} {
		calls := f.calls.Load()
		w := f.do(t, c.method, c.target, nil)
		require.Equal(t, c.status, w.Code, c.target)
		require.Equal(t, "application/problem+json", w.Header().Get("Content-Type"), c.target)
		require.Equal(t, calls, f.calls.Load(), "%s %s must not reach the origin", c.method, c.target)
	}
}

func TestGatewayTellsTheOriginTheViewerAddress(t *testing.T) {
	t.Parallel()
	f := newFixture(t, ok)
	r := httptest.NewRequest("GET", "/api/events", nil)
	r.RemoteAddr = "198.51.100.7:5555"
	r.Header.Set("CloudFront-Viewer-Address", "10.0.0.1:1") // a viewer cannot choose it
	f.gw.ServeHTTP(httptest.NewRecorder(), r)
	require.Equal(t, "198.51.100.7:5555", f.last.Load().(*http.Request).Header.Get("CloudFront-Viewer-Address"))
}

// TestBearerClientsKeepTheirTokenThroughOAC: CloudFront signs every API
// origin request for OAC, overwriting Authorization, so a script's
// "Authorization: Bearer" never reaches the API as sent. The edge
// function carries the token in a header OAC leaves alone, where the API
// reads it; a token a viewer puts in that header itself is not trusted
// over its bearer.
func TestBearerClientsKeepTheirTokenThroughOAC(t *testing.T) {
	t.Parallel()
	var seen atomic.Value
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		seen.Store(web.BearerToken(r))
		require.True(t, strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 "), "the origin sees OAC's signature")
		ok(w, r)
	})
	sess, _, err := f.session.Issue(token.Claims{Account: 42, Role: "fan"}, time.Hour)
	require.NoError(t, err)
	r := httptest.NewRequest("GET", "/api/me/orders", nil)
	r.Header.Set("Authorization", "Bearer "+sess)
	w := httptest.NewRecorder()
	f.gw.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, "the edge accepts the bearer")
	require.Equal(t, sess, seen.Load(), "the API gets the bearer token past OAC")

	r = httptest.NewRequest("GET", "/api/events", nil)
	r.Header.Set("X-Catraca-Token", "forged")
	f.gw.ServeHTTP(httptest.NewRecorder(), r)
	require.Equal(t, "", seen.Load(), "a viewer's own X-Catraca-Token is dropped at the edge")
}
