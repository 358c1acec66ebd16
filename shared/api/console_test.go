package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/dev/apptest"
	"github.com/catraca/catraca/shared/venue"
)

// The organizer console's lists show each organizer their own venues,
// versions and events only; fans are refused.
func TestConsoleListsAreScopedToTheOrganizer(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	ana, bob := organizerNamed(t, a, srv, "ana-lists@example.com"), organizerNamed(t, a, srv, "bob-lists@example.com")
	fan := newFan(t, srv)
	fan.signUp("fan-lists@example.com")
	anaVenue := importVenue(t, ana, venue.Stadium("Ana Lists Arena", "Recife", 20, 5))
	require.Equal(t, http.StatusCreated, ana.do(http.MethodPost, "/api/venues/"+itoa(anaVenue)+"/layouts", venue.Stadium("Ana Lists Arena", "Recife", 30, 5)).Status)
	anaEvent := createEvent(t, ana, anaVenue, "Ana Lists Show", false)

	r := ana.do(http.MethodGet, "/api/venues", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	venues := r.Body["venues"].([]any)
	require.Len(t, venues, 1)
	v := venues[0].(map[string]any)
	require.EqualValues(t, anaVenue, v["id"])
	require.Len(t, v["versions"], 2)
	require.EqualValues(t, 2, v["versions"].([]any)[0].(map[string]any)["version"], "newest version first")

	r = ana.do(http.MethodGet, "/api/venues/"+itoa(anaVenue)+"/layouts", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["versions"], 2)

	r = ana.do(http.MethodGet, "/api/organizer/events", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["events"], 1)
	require.EqualValues(t, anaEvent, r.Body["events"].([]any)[0].(map[string]any)["id"])

	// Bob sees nothing of Ana's.
	r = bob.do(http.MethodGet, "/api/venues", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Empty(t, r.Body["venues"])
	requireProblem(t, bob.do(http.MethodGet, "/api/venues/"+itoa(anaVenue)+"/layouts", nil), http.StatusNotFound, "venue-not-found")
	r = bob.do(http.MethodGet, "/api/organizer/events", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Empty(t, r.Body["events"])

	for _, path := range []string{"/api/venues", "/api/venues/" + itoa(anaVenue) + "/layouts", "/api/organizer/events"} {
		requireProblem(t, fan.do(http.MethodGet, path, nil), http.StatusForbidden, "organizer-only")
		requireProblem(t, newFan(t, srv).do(http.MethodGet, path, nil), http.StatusUnauthorized, "unauthenticated")
	}
}
