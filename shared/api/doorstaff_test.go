package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/pspsim"
)

// An organizer sees who can scan at the event's doors and takes it back at
// once: the revoked account's next scan, bundle download and sync are
// refused, old offline scans included (the server cannot tell when a
// revoked gate really read them).
func TestOrganizerListsAndRevokesDoorStaff(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ev := "/api/events/" + itoa(s.eventID)
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "a", s.seats[0], s.seats[1])
	_, codes := myCodes(t, ana)

	temp := s.doorStaff(t, "temp@example.com")
	s.named(t, "temp@example.com", "Tereza Secret")
	// Granting again (as typed another time) changes nothing: 200, the same grant.
	again := org.do(http.MethodPost, ev+"/door-staff", map[string]any{"email": " Temp@Example.com"})
	require.Equal(t, http.StatusOK, again.Status, string(again.Raw))
	require.Equal(t, "Temp@Example.com", again.Body["email"], "the email as the organizer typed it")
	require.NotContains(t, string(again.Raw), "Tereza", "an email must not tell the organizer whose account it is")
	require.NotContains(t, again.Body, "name")

	list := org.do(http.MethodGet, ev+"/door-staff", nil)
	require.Equal(t, http.StatusOK, list.Status, string(list.Raw))
	staff := list.Body["staff"].([]any)
	require.Len(t, staff, 1, "granting twice does not duplicate")
	grant := staff[0].(map[string]any)
	require.Equal(t, "temp@example.com", grant["email"])
	require.Equal(t, again.Body["id"], grant["id"])
	require.NotEmpty(t, grant["granted_at"])
	require.NotContains(t, string(list.Raw), "Tereza")

	// Before revocation the temp worker scans online and takes a bundle.
	require.Equal(t, "admitted", temp.do(http.MethodPost, ev+"/checkins", map[string]any{"code": codes[0], "gate": "Temp", "scan_id": "1"}).Body["outcome"])
	require.Equal(t, http.StatusOK, temp.do(http.MethodGet, ev+"/scan-bundle", nil).Status)
	offlineAt := time.Now()

	revoke := ev + "/door-staff/" + itoa(int64(grant["id"].(float64)))
	r := temp.do(http.MethodDelete, revoke, nil)
	requireProblem(t, r, http.StatusNotFound, "event-not-found")
	r = org.do(http.MethodDelete, revoke, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Raw))

	requireProblem(t, temp.do(http.MethodPost, ev+"/checkins", map[string]any{"code": codes[1], "gate": "Temp", "scan_id": "2"}), http.StatusNotFound, "event-not-found")
	requireProblem(t, temp.do(http.MethodGet, ev+"/scan-bundle", nil), http.StatusNotFound, "event-not-found")
	requireProblem(t, temp.do(http.MethodGet, ev+"/checkins", nil), http.StatusNotFound, "event-not-found")
	// The old bundle's offline admission, dated before the revocation.
	requireProblem(t, temp.do(http.MethodPost, ev+"/checkins/sync", map[string]any{"gate": "Temp",
		"scans": []map[string]any{{"scan_id": "3", "code": codes[1], "scanned_at": offlineAt}}}), http.StatusNotFound, "event-not-found")
	require.EqualValues(t, 1, org.do(http.MethodGet, ev+"/checkins", nil).Body["checked_in"], "nothing the revoked gate sent counts")

	require.Empty(t, org.do(http.MethodGet, ev+"/door-staff", nil).Body["staff"])
	requireProblem(t, org.do(http.MethodDelete, revoke, nil), http.StatusNotFound, "staff-not-found")
	requireProblem(t, org.do(http.MethodDelete, ev+"/door-staff/424242", nil), http.StatusNotFound, "staff-not-found")

	// Granted again: a new grant, and the doors open to them again.
	r = org.do(http.MethodPost, ev+"/door-staff", map[string]any{"email": "temp@example.com"})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.NotEqual(t, grant["id"], r.Body["id"])
	require.Equal(t, http.StatusOK, temp.do(http.MethodGet, ev+"/scan-bundle", nil).Status)
}

// Door staff of one event have no door at another, even the same
// organizer's: scans, bundle and sync answer as for an absent event, and a
// ticket of the other event scanned at theirs names nobody.
func TestDoorStaffOfOneEventCannotWorkAnother(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	door := s.doorStaff(t, "door@example.com")
	other := "/api/events/" + itoa(createEvent(t, org, importVenue(t, org, venue.Stadium("Other Arena", "Recife", 20, 5)), "Other Show", false))
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "a", s.seats[0])
	_, codes := myCodes(t, ana)

	requireProblem(t, door.do(http.MethodPost, other+"/checkins", map[string]any{"code": codes[0], "gate": "X", "scan_id": "1"}), http.StatusNotFound, "event-not-found")
	requireProblem(t, door.do(http.MethodGet, other+"/scan-bundle", nil), http.StatusNotFound, "event-not-found")
	requireProblem(t, door.do(http.MethodPost, other+"/checkins/sync", map[string]any{"gate": "X", "scans": []any{}}), http.StatusNotFound, "event-not-found")
	requireProblem(t, door.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/door-staff", nil), http.StatusNotFound, "event-not-found")

	// The organizer's own scanner at the other event: a wrong event, no name.
	r := org.do(http.MethodPost, other+"/checkins", map[string]any{"code": codes[0], "gate": "X", "scan_id": "1"})
	require.Equal(t, "wrong-event", r.Body["outcome"], string(r.Raw))
	require.NotContains(t, r.Body, "name")
}

// A cancelled event takes no new staff, but its organizer can still take
// the doors back from someone.
func TestCancelledEventsStillRevokeDoorStaff(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	door := s.doorStaff(t, "door@example.com")
	newFan(t, s.srv).signUp("late@example.com")
	ev := "/api/events/" + itoa(s.eventID)
	require.Equal(t, http.StatusOK, org.do(http.MethodPut, ev+"/status", map[string]any{"status": "cancelled"}).Status)

	requireRefusal(t, org.do(http.MethodPost, ev+"/door-staff", map[string]any{"email": "late@example.com"}), http.StatusBadRequest, "invalid-event", "A cancelled event cannot change.", "")
	staff := org.do(http.MethodGet, ev+"/door-staff", nil).Body["staff"].([]any)
	require.Len(t, staff, 1)
	r := org.do(http.MethodDelete, ev+"/door-staff/"+itoa(int64(staff[0].(map[string]any)["id"].(float64))), nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Raw))
	requireProblem(t, door.do(http.MethodGet, ev+"/scan-bundle", nil), http.StatusNotFound, "event-not-found")
}

// Hostile door-staff requests are 400 problems (or, for a path id that
// cannot name anything, the 404 of every other path id), never a 5xx or a
// lookup.
func TestDoorStaffRefusesHostileInput(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ev := "/api/events/" + itoa(s.eventID)
	for name, body := range map[string]string{
		"NUL":           `{"email":"a\u0000@example.com"}`,
		"invalid UTF-8": "{\"email\":\"a\xff@example.com\"}",
		"10 kB":         `{"email":"` + strings.Repeat("a", 10<<10) + `@example.com"}`,
		"not a string":  `{"email":12}`,
		"no email":      `{}`,
		"unknown field": `{"email":"a@example.com","name":"x"}`,
	} {
		r := org.send(http.MethodPost, ev+"/door-staff", "application/json", body)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", name, r.Raw)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), name)
	}
	for _, id := range []string{"99999999999999999999", "2147483648", "-1", "0", "01", "x"} {
		r := org.do(http.MethodDelete, ev+"/door-staff/"+id, nil)
		require.Equal(t, http.StatusNotFound, r.Status, "%s: %s", id, r.Raw)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), id)
	}
	requireProblem(t, org.do(http.MethodDelete, "/api/events/99999999999999999999/door-staff/1", nil), http.StatusNotFound, "not-found")
}

// Door staff find the events whose doors they keep (GET
// /api/me/door-events, across shards); others find none, and a revoked
// grant leaves the list.
func TestDoorStaffListTheirEvents(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	staff := s.doorStaff(t, "gate@example.com")
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")

	mine := func(f *fan) []any {
		t.Helper()
		r := f.do(http.MethodGet, "/api/me/door-events", nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Body["events"].([]any)
	}
	events := mine(staff)
	require.Len(t, events, 1)
	ev := events[0].(map[string]any)
	require.EqualValues(t, s.eventID, ev["id"])
	require.NotEmpty(t, ev["name"])
	require.NotEmpty(t, ev["venue_name"])
	require.Empty(t, mine(ana), "a fan keeps no doors")
	requireProblem(t, newFan(t, s.srv).do(http.MethodGet, "/api/me/door-events", nil), http.StatusUnauthorized, "unauthenticated")

	grants := org.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/door-staff", nil).Body["staff"].([]any)
	id := int64(grants[0].(map[string]any)["id"].(float64))
	require.Equal(t, http.StatusNoContent, org.do(http.MethodDelete, "/api/events/"+itoa(s.eventID)+"/door-staff/"+itoa(id), nil).Status)
	require.Empty(t, mine(staff), "a revoked grant leaves the list")
}
