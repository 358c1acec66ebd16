package fan

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/challenge"
)

// TestAccountsOnOneDeviceShareItsCookie: two accounts on one device send
// the device's cookie (set as at its first log-in), each with its own
// session; a fan without a device gets one from the server and keeps it.
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
	require.Equal(t, map[string]string{"a": d.ID, "b": d.ID, "other": "dev-other"}, seen)
}

// TestJoinAnswersTheChallenge: a join refused with the waiting room's
// proof-of-work (428 challenge-required, as shared/api answers) is solved
// by the fan's Solver, SolvePoW, and sent again with the answer the page
// sends; the server checks it as the door does (challenge.ZeroBits).
func TestJoinAnswersTheChallenge(t *testing.T) {
	pow := challenge.NewPoW([][]byte{[]byte("key")}, nil, "", time.Minute, challenge.Difficulty{Base: 8, Max: 8})
	c, err := pow.Issue(challenge.Subject{Account: 1, Event: 1})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a challenge.Answer
		json.NewDecoder(r.Body).Decode(&a)
		if a.Token != c.Token || challenge.ZeroBits(a.Token, a.Solution) < c.Bits {
			b, _ := json.Marshal(map[string]any{"type": "https://catraca.dev/problems/challenge-required", "status": 428,
				"detail": "solve it", "challenge": c})
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusPreconditionRequired)
			w.Write(b)
			return
		}
		w.Write([]byte(`{"state":"prequeue","position":7}`))
	}))
	defer srv.Close()
	f := New(srv.URL, nil)
	_, err = f.Join(context.Background(), 1)
	require.ErrorContains(t, err, "no solver")
	f.Solve = SolvePoW
	s, err := f.Join(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, int64(7), s.Position)
	n, solving := f.Challenged()
	require.Equal(t, 1, n)
	require.Positive(t, solving)
}
