package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// TestAdmittedToTwoRoomsHoldsAtBoth: one browser (one cookie jar) admitted
// to two waiting-room events buys at either, whichever heartbeat came last.
func TestAdmittedToTwoRoomsHoldsAtBoth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Two Rooms Arena", "Natal", 20, 10))
	seats := seatIDs(t, a, venueID)
	ids := []int64{createEvent(t, o, venueID, "Room A", true), createEvent(t, o, venueID, "Room B", true)}
	tick := func() {
		t.Helper()
		for _, id := range ids {
			e, err := a.Events.Get(ctx, id)
			require.NoError(t, err)
			_, err = a.Admission().Tick(ctx, e)
			require.NoError(t, err)
		}
	}
	f := newFan(t, srv)
	f.signUp("two@example.com")
	tick()
	for _, id := range ids {
		require.Equal(t, http.StatusOK, f.do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil).Status)
	}
	tick()
	for _, id := range ids {
		require.Equal(t, "admitted", f.do(http.MethodGet, "/api/events/"+itoa(id)+"/queue", nil).Body["state"])
	}
	hold := func(id int64, seat int64, key string) response {
		return f.do(http.MethodPost, "/api/events/"+itoa(id)+"/holds", map[string]any{"seats": []int64{seat}}, "Idempotency-Key", key)
	}
	r := hold(ids[0], seats[0], "a1")
	require.Equal(t, http.StatusCreated, r.Status, "the first room's admission survives the second's: %s", r.Raw)
	f.do(http.MethodGet, "/api/events/"+itoa(ids[0])+"/queue", nil) // the first room's heartbeat
	r = hold(ids[1], seats[1], "b1")
	require.Equal(t, http.StatusCreated, r.Status, "and the second's survives the first's heartbeat: %s", r.Raw)
}

// TestAdmissionCookieAttacks: a token is good for its own event whatever
// cookie carries it, and a browser keeps a bounded number of them.
func TestAdmissionCookieAttacks(t *testing.T) {
	t.Parallel()
	g := newGatedRoom(t, "Cookie Arena")
	other := createEvent(t, g.o, g.venueID, "Other", true)
	f := newFan(t, g.srv)
	f.signUp("attacker@example.com")
	g.tick(t)
	f.do(http.MethodPost, "/api/events/"+itoa(g.id)+"/queue", nil)
	g.tick(t)
	r := f.do(http.MethodGet, "/api/events/"+itoa(g.id)+"/queue", nil)
	require.Equal(t, "admitted", r.Body["state"])
	tok := r.Body["admission_token"].(string)
	set := r.Header.Values("Set-Cookie")
	name := "catraca_admission_" + itoa(g.id)
	require.True(t, hasCookie(set, name+"="+tok), "the admission is a cookie of its own event: %q", set)
	require.Contains(t, set[0], "; Path=/; ")
	require.Contains(t, set[0], "; HttpOnly; SameSite=Lax")

	// The event's token under another event's cookie name buys nothing there.
	bare := newFan(t, g.srv)
	bare.header = f.header.Clone()
	bare.client.Jar = nil
	session := cookieValue(t, f, "catraca_session")
	hold := func(id int64, cookies string) response {
		return bare.do(http.MethodPost, "/api/events/"+itoa(id)+"/holds", map[string]any{"seats": g.seats[:1]},
			"Idempotency-Key", "k"+cookies[:3], "Cookie", "catraca_session="+session+"; "+cookies)
	}
	requireProblem(t, hold(other, "catraca_admission_"+itoa(other)+"="+tok), http.StatusForbidden, "admission-required")
	requireProblem(t, hold(other, "catraca_admission="+tok), http.StatusForbidden, "admission-required")
	// A forged token under the right name neither.
	requireProblem(t, hold(g.id, name+"="+tok[:len(tok)-2]+"xx"), http.StatusForbidden, "admission-required")

	// Many admission cookies: the next admission answer expires the junk
	// and the oldest beyond the limit, and the legacy single cookie.
	var many []string
	for i := range 20 {
		many = append(many, "catraca_admission_"+itoa(int64(900000+i))+"=junk")
	}
	many = append(many, "catraca_admission=old")
	r = bare.do(http.MethodGet, "/api/events/"+itoa(g.id)+"/queue", nil,
		"Cookie", "catraca_session="+session+"; "+strings.Join(many, "; "))
	require.Equal(t, "admitted", r.Body["state"])
	expired := 0
	for _, c := range r.Header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "catraca_admission") && strings.Contains(c, "Max-Age=0") {
			expired++
		}
	}
	require.Equal(t, 21, expired, "every bad admission cookie is expired: %q", r.Header.Values("Set-Cookie"))
}

func hasCookie(set []string, prefix string) bool {
	for _, c := range set {
		if strings.HasPrefix(c, prefix+";") {
			return true
		}
	}
	return false
}

func cookieValue(t *testing.T, f *fan, name string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL, nil)
	for _, c := range f.client.Jar.Cookies(req.URL) {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("no cookie %s", name)
	return ""
}
