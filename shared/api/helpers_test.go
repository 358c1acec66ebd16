package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/venue"
)

type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func call(t testing.TB, srv *httptest.Server, method, path, contentType string, body io.Reader) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, body)
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out.Body))
	}
	return out
}

func postJSON(t testing.TB, srv *httptest.Server, path string, v any) response {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return call(t, srv, http.MethodPost, path, "application/json", bytes.NewReader(b))
}

func requireProblem(t testing.TB, r response, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.Status, string(r.Raw))
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	require.Equal(t, "https://catraca.dev/problems/"+code, r.Body["type"])
	require.EqualValues(t, status, r.Body["status"])
	require.NotEmpty(t, r.Body["detail"], "a problem tells the client what to do")
}

// requireRefusal checks a domain refusal: its message as the domain wrote
// it, and one entry in the errors member pointing at the field at fault.
func requireRefusal(t testing.TB, r response, status int, code, detail, pointer string) {
	t.Helper()
	requireProblem(t, r, status, code)
	require.Equal(t, detail, r.Body["detail"])
	want := map[string]any{"detail": detail}
	if pointer != "" {
		want["pointer"] = pointer
	}
	require.Equal(t, []any{want}, r.Body["errors"])
}

// fan is an HTTP client with its own cookie jar (its own session).
type fan struct {
	t      testing.TB
	srv    *httptest.Server
	client *http.Client
	header http.Header
}

func newFan(t testing.TB, srv *httptest.Server) *fan {
	jar, _ := cookiejar.New(nil)
	return &fan{t: t, srv: srv, client: &http.Client{Jar: jar}, header: http.Header{}}
}

func (f *fan) do(method, path string, body any, header ...string) response {
	f.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(f.t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.srv.URL+path, r)
	require.NoError(f.t, err)
	req.Header = f.header.Clone()
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := f.client.Do(req)
	require.NoError(f.t, err)
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(f.t, json.Unmarshal(raw, &out.Body))
	}
	return out
}

// on returns the same fan (same session) talking to another server.
func (f *fan) on(srv *httptest.Server) *fan {
	g := *f
	g.srv = srv
	return &g
}

func (f *fan) signUp(email string) int64 {
	f.t.Helper()
	r := f.do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": "a long enough password", "name": "Fan"})
	require.Equal(f.t, http.StatusCreated, r.Status, string(r.Raw))
	return int64(r.Body["account"].(map[string]any)["id"].(float64))
}

// organizerFan signs up an account and promotes it to organizer.
func organizerFan(t testing.TB, a *app.App, srv *httptest.Server) *fan {
	o := newFan(t, srv)
	id := o.signUp("org@example.com")
	require.NoError(t, pgstore.New(a.Catalog).SetRole(context.Background(), id, "organizer"))
	r := o.do(http.MethodPost, "/api/session", map[string]any{"email": "org@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status)
	return o
}

// importVenue imports a layout as a new venue and returns its id.
func importVenue(t testing.TB, o *fan, l venue.Layout) int64 {
	t.Helper()
	r := o.do(http.MethodPost, "/api/venues", l)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	return int64(r.Body["venue_id"].(float64))
}

func createEvent(t testing.TB, o *fan, venueID int64, name string, waitingRoom bool) int64 {
	now := time.Now().UTC()
	r := o.do(http.MethodPost, "/api/events", map[string]any{
		"venue_id": venueID, "layout_version": 1, "name": name,
		"starts_at": now.Add(72 * time.Hour), "sale_starts_at": now.Add(-time.Hour), "sale_ends_at": now.Add(71 * time.Hour),
		"max_per_hold": 4, "max_per_account": 6,
		"price_levels": []map[string]any{{"code": "A", "price_cents": 9000}, {"code": "B", "price_cents": 7000}, {"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}},
		"waiting_room": map[string]any{"enabled": waitingRoom},
	})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	id := int64(r.Body["id"].(float64))
	r = o.do(http.MethodPut, "/api/events/"+itoa(id)+"/status", map[string]any{"status": "on_sale"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return id
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func seatIDs(t testing.TB, a *app.App, venueID int64) []int64 {
	l, err := venue.NewStore(a.Catalog).Load(context.Background(), venueID, 1)
	require.NoError(t, err)
	var ids []int64
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			for _, st := range r.Seats {
				ids = append(ids, st.ID)
			}
		}
	}
	return ids
}

// waitUntil polls cond until it holds, failing after d.
func waitUntil(t testing.TB, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+msg, args...)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// atOnce sends n copies of one request together (released by one signal)
// and returns every answer: many clicks racing each other.
func atOnce(n int, send func() response) []response {
	answers := make([]response, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			<-start
			answers[i] = send()
		})
	}
	close(start)
	wg.Wait()
	return answers
}
