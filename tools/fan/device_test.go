package fan

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAccountsOnOneDeviceShareItsCookie: two accounts on one device send
// the device cookie the first was given, each with its own session; a
// fan on another device has none.
func TestAccountsOnOneDeviceShareItsCookie(t *testing.T) {
	seen := map[string]string{} // session → device cookie it came with
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, _ := r.Cookie("catraca_session")
		d, err := r.Cookie("catraca_device")
		if err != nil {
			http.SetCookie(w, &http.Cookie{Name: "catraca_device", Value: "dev-" + s.Value, Path: "/"})
			return
		}
		seen[s.Value] = d.Value
	}))
	defer srv.Close()
	ctx := context.Background()
	d := NewDevice()
	a, b, other := OnDevice(srv.URL, nil, d), OnDevice(srv.URL, nil, d), New(srv.URL, nil)
	for i, f := range []*Fan{a, b, other} {
		f.SetSession([]string{"a", "b", "other"}[i])
	}
	for _, f := range []*Fan{a, b, other, other} {
		require.NoError(t, f.Call(ctx, "x", http.MethodGet, "/", nil, nil))
	}
	require.Equal(t, map[string]string{"b": "dev-a", "other": "dev-other"}, seen)
}

// TestJoinAnswersTheChallenge: a join refused with a challenge is solved
// by the fan's Solver and sent again with the answer.
func TestJoinAnswersTheChallenge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Challenge json.RawMessage `json:"challenge"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if string(body.Challenge) != `"solved-42"` {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"type":"https://catraca.dev/problems/challenge-required","status":403,"detail":"solve it","challenge":{"seed":"42"}}`))
			return
		}
		w.Write([]byte(`{"state":"prequeue","position":7}`))
	}))
	defer srv.Close()
	f := New(srv.URL, nil)
	_, err := f.Join(context.Background(), 1)
	require.ErrorContains(t, err, "no solver")
	f.Solve = func(_ context.Context, c json.RawMessage) (json.RawMessage, error) {
		var p struct{ Seed string }
		require.NoError(t, json.Unmarshal(c, &p))
		return json.RawMessage(`"solved-` + p.Seed + `"`), nil
	}
	s, err := f.Join(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, int64(7), s.Position)
	n, solving := f.Challenged()
	require.Equal(t, 1, n)
	require.Positive(t, solving)
}
