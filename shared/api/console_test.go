package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
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

// postCSV sends a seat list as text/csv with f's session.
func postCSV(t *testing.T, f *fan, path, body string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "text/csv; charset=utf-8")
	res, err := f.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	require.NoError(t, json.Unmarshal(raw, &out.Body), string(raw))
	return out
}

const seatList = "section,row,seat,x,y,price_level\n101,A,1,10,10,A\n101,A,2,15,10,A\n102,A,1,40,10,B\n"

// A venue imports its seat list as CSV: a dry run previews the map, bad
// lines come back one by one with their numbers, and versions follow.
func TestImportLayoutFromCSV(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	ana, bob := organizerNamed(t, a, srv, "ana-csv@example.com"), organizerNamed(t, a, srv, "bob-csv@example.com")
	fan := newFan(t, srv)
	fan.signUp("fan-csv@example.com")

	r := postCSV(t, ana, "/api/venues?name=Teatro&city=Recife&dry_run=true", seatList)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["sections"], 2, "the preview is the map the seat map draws")
	r = ana.do(http.MethodGet, "/api/venues", nil)
	require.Empty(t, r.Body["venues"], "a dry run stores nothing")

	bad := strings.Replace(seatList, "101,A,2,15,10,A", "101,A,two,15,10,A", 1) + "102,A,1,45,10,B\n"
	r = postCSV(t, ana, "/api/venues?name=Teatro&city=Recife", bad)
	requireProblem(t, r, http.StatusBadRequest, "invalid-layout")
	require.Contains(t, r.Body["detail"], "Line 3: seat must be a whole number")
	require.Equal(t, []any{
		map[string]any{"line": 3.0, "field": "seat", "detail": `seat must be a whole number from 0 to 2147483647, not "two"`},
		map[string]any{"line": 5.0, "field": "seat", "detail": "section 102 row A seat 1 is already on line 4"},
	}, r.Body["errors"])
	requireProblem(t, postCSV(t, ana, "/api/venues?city=Recife", seatList), http.StatusBadRequest, "invalid-layout")
	requireProblem(t, postCSV(t, ana, "/api/venues?name=T&city=R&dry_run=maybe", seatList), http.StatusBadRequest, "invalid-parameter")

	r = postCSV(t, ana, "/api/venues?name=Teatro&city=Recife", seatList)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, 3, r.Body["seat_count"])
	id := itoa(int64(r.Body["venue_id"].(float64)))
	r = postCSV(t, ana, "/api/venues/"+id+"/layouts", seatList+"102,A,2,45,10,B\n")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, 2, r.Body["version"])

	requireProblem(t, postCSV(t, bob, "/api/venues/"+id+"/layouts", seatList), http.StatusForbidden, "not-your-venue")
	requireProblem(t, postCSV(t, fan, "/api/venues?name=T&city=R", seatList), http.StatusForbidden, "organizer-only")
	requireProblem(t, postCSV(t, ana, "/api/venues?name=T&city=R", "101,A,1,10,10,A\x00\n"), http.StatusBadRequest, "invalid-text")

	// JSON layouts preview too.
	r = ana.do(http.MethodPost, "/api/venues?dry_run=true", venue.Stadium("Preview Arena", "Recife", 20, 5))
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.NotEmpty(t, r.Body["sections"])
}
