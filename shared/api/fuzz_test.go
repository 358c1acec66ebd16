package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/pspsim"
)

// FuzzAPI sends arbitrary requests (method, path and query, headers, body,
// and who sends them) through the real handler on real PostgreSQL and
// Redis. The property: never a 5xx, and every error is problem JSON with a
// detail. Paths may name the fixture's ids as {event}, {gated}, {hold},
// {order} (pending), {paid} and {venue}. The seed corpus in testdata/fuzz/FuzzAPI holds the
// cases of issue 15; `go test` runs it, `make fuzz` explores from it.
func FuzzAPI(f *testing.F) {
	s := newShop(f, pspsim.Faults{})
	org := organizerNamed(f, s.app, s.srv, "fuzz-org@example.com")
	venueID := importVenue(f, org, venue.Stadium("Fuzz Arena", "Recife", 40, 10))
	gated := createEvent(f, org, venueID, "Fuzz Gated", true)
	// The controller publishes a room within a second of its event; before
	// that a join answers "opening" (retry in a second) instead of a place.
	ge, err := s.app.Events.Get(context.Background(), gated)
	require.NoError(f, err)
	_, err = s.app.Room.Publish(context.Background(), gated, queue.SettingsOf(ge, 3*time.Minute))
	require.NoError(f, err)
	buyer := newFan(f, s.srv)
	fanID := buyer.signUp("fuzz-fan@example.com")
	holdID, orderID := s.hold(f, buyer, "fuzz-hold", s.seats[0])
	_, paidID, _ := s.paidOrder(f, "fuzz-paid@example.com", s.seats[1])
	admission, _, err := s.app.Admissions.Issue(token.Claims{Account: fanID, Event: gated}, 24*time.Hour)
	require.NoError(f, err)
	ids := strings.NewReplacer("{event}", itoa(s.eventID), "{gated}", itoa(gated), "{hold}", itoa(holdID),
		"{order}", itoa(orderID), "{paid}", itoa(paidID), "{venue}", itoa(venueID))
	sessions := []string{"", logInToken(f, s, "fuzz-fan@example.com"), logInToken(f, s, "fuzz-org@example.com"), logInToken(f, s, "org@example.com")}

	f.Add("GET", "/api/events/{event}", "", []byte(nil), uint8(0))
	f.Add("POST", "/api/events/{event}/holds", "Content-Type: application/json\nIdempotency-Key: f1", []byte(`{"seats":[1]}`), uint8(1))
	f.Fuzz(func(t *testing.T, method, target, header string, body []byte, who uint8) {
		u, err := url.ParseRequestURI(ids.Replace(target))
		header, body = ids.Replace(header), []byte(ids.Replace(string(body)))
		if err != nil || !validMethod(method) {
			t.Skip()
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, method, "/", bytes.NewReader(body))
		req.URL, req.RequestURI = u, u.RequestURI()
		for _, line := range strings.Split(header, "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && validHeader(k, v) {
				req.Header.Add(k, strings.TrimSpace(v))
			}
		}
		// who: bits 0-1 the session (none, fan, the organizer of {gated}
		// and {venue}, the organizer of {event} and its orders), bit 2 as a
		// cookie rather than a bearer, bit 3 with the fan's admission token.
		switch sess := sessions[who&3]; {
		case sess == "":
		case who&4 != 0:
			req.AddCookie(&http.Cookie{Name: "catraca_session", Value: sess})
		default:
			req.Header.Set("Authorization", "Bearer "+sess)
		}
		if who&8 != 0 {
			req.Header.Set("X-Admission-Token", admission)
		}
		// A stream answers until its client leaves: leave at the first flush.
		w := &leavingRecorder{ResponseRecorder: httptest.NewRecorder(), leave: cancel}
		serveOnce(validated(t, s.app.Handler()), w, req)
		res := w.Result()
		t.Logf("%s %s: %d", method, u, res.StatusCode)
		if res.StatusCode >= 500 {
			t.Fatalf("%s %s: %d %s", method, u, res.StatusCode, w.Body.String())
		}
		if res.StatusCode < 400 {
			return
		}
		require.Equal(t, "application/problem+json", res.Header.Get("Content-Type"), "%s %s: %d", method, u, res.StatusCode)
		var p struct {
			Type   string `json:"type"`
			Status int    `json:"status"`
			Detail string `json:"detail"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &p), "%s %s: %s", method, u, w.Body.String())
		require.True(t, strings.HasPrefix(p.Type, "https://catraca.dev/problems/"), p.Type)
		require.Equal(t, res.StatusCode, p.Status)
		require.NotEmpty(t, p.Detail, "a problem tells the client what to do")
	})
}

// leavingRecorder records a response and cancels the request at its first
// flush, as a client that reads the headers of a stream and leaves.
type leavingRecorder struct {
	*httptest.ResponseRecorder
	leave context.CancelFunc
}

func (l *leavingRecorder) Flush() {
	l.ResponseRecorder.Flush()
	l.leave()
}

// serveOnce serves one request as net/http would: a handler that cuts the
// connection (http.ErrAbortHandler) after its client left is not a failure.
func serveOnce(h http.Handler, w *leavingRecorder, req *http.Request) {
	defer func() {
		if v := recover(); v != nil && (v != http.ErrAbortHandler || req.Context().Err() == nil) {
			panic(v)
		}
	}()
	h.ServeHTTP(w, req)
}

func logInToken(t testing.TB, s *shop, email string) string {
	r := postJSON(t, s.srv, "/api/session", map[string]any{"email": email, "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return r.Body["token"].(string)
}

// validMethod and validHeader keep to what an HTTP/1.1 server would parse.
func validMethod(m string) bool {
	return m != "" && len(m) < 20 && strings.IndexFunc(m, func(r rune) bool { return r < '!' || r > '~' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) }) < 0
}

func validHeader(k, v string) bool {
	return validMethod(strings.TrimSpace(k)) && strings.TrimSpace(k) == k &&
		strings.IndexFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) < 0
}
