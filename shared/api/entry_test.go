package api_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/pspsim"
)

// paidTickets buys n seats for f and waits for the tickets.
func (s *shop) paidTickets(t testing.TB, f *fan, key string, seats ...int64) {
	t.Helper()
	_, orderID := s.hold(t, f, key, seats...)
	r := f.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil)
	require.Less(t, r.Status, 300, string(r.Raw))
	_, err := s.sim.Pay(s.payment(t, orderID).ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool {
		tickets, _ := s.orderStatus(t, f, orderID).Body["tickets"].([]any)
		return len(tickets) == len(seats)
	}, "the tickets of order %d", orderID)
}

// myCodes returns the current code of each ticket f holds, as the ticket
// page shows it when f opens the ticket.
func myCodes(t *testing.T, f *fan) (ids []int64, codes []string) {
	t.Helper()
	list, _ := ticketPage(t, f, "")
	for _, tk := range list {
		id := int64(tk["id"].(float64))
		r := f.do(http.MethodGet, "/api/me/tickets/"+itoa(id), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		ids, codes = append(ids, id), append(codes, requireCodes(t, r.Body["ticket"].(map[string]any))[0])
	}
	return ids, codes
}

func TestDoorOverHTTP(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, bia, door, org := newFan(t, s.srv), newFan(t, s.srv), newFan(t, s.srv), newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	door.signUp("door@example.com")
	require.Equal(t, http.StatusOK, org.do(http.MethodPost, "/api/session", map[string]any{"email": "org@example.com", "password": "a long enough password"}).Status)
	s.paidTickets(t, ana, "d1", s.seats[:2]...)
	ids, codes := myCodes(t, ana)
	require.Len(t, codes, 2)

	ev := "/api/events/" + itoa(s.eventID)
	scan := func(code, id string) response {
		return door.do(http.MethodPost, ev+"/checkins", map[string]any{"code": code, "gate": "North", "scan_id": id})
	}
	requireProblem(t, scan(codes[0], "x"), http.StatusNotFound, "event-not-found")
	requireProblem(t, door.do(http.MethodPost, ev+"/door-staff", map[string]any{"email": "door@example.com"}), http.StatusNotFound, "event-not-found")
	requireProblem(t, org.do(http.MethodPost, ev+"/door-staff", map[string]any{"email": "nobody@example.com"}), http.StatusNotFound, "account-not-found")
	require.Equal(t, http.StatusCreated, org.do(http.MethodPost, ev+"/door-staff", map[string]any{"email": "door@example.com"}).Status)

	r := scan(codes[0], "1")
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "admitted", r.Body["outcome"])
	require.Equal(t, "Fan", r.Body["name"])
	require.NotEmpty(t, r.Body["seat"])
	r = scan(codes[0], "2")
	require.Equal(t, "already-used", r.Body["outcome"])
	require.Equal(t, "North", r.Body["first_gate"])
	requireProblem(t, door.do(http.MethodPost, ev+"/checkins", map[string]any{"code": codes[1], "scan_id": "3"}), http.StatusBadRequest, "invalid-gate")
	rules := func(maxTransfers int) map[string]any {
		return map[string]any{"doors_open_at": nil, "static_codes": false, "transfers_allowed": true, "max_transfers": maxTransfers}
	}
	requireProblem(t, org.do(http.MethodPut, ev+"/entry", rules(-1)), http.StatusBadRequest, "invalid-settings")
	requireProblem(t, door.do(http.MethodPut, ev+"/entry", rules(2)), http.StatusNotFound, "event-not-found")
	st := door.do(http.MethodGet, ev+"/checkins", nil)
	require.NotContains(t, st.Body, "settings", "the rules are the organizer's")
	require.Equal(t, float64(1), st.Body["checked_in"])
	require.Equal(t, float64(2), st.Body["expected"])

	// The second ticket goes to Bia: Ana's code is void at once.
	tr := "/api/tickets/" + itoa(ids[1]) + "/transfer"
	requireProblem(t, bia.do(http.MethodPost, tr, map[string]any{"email": "bia@example.com"}), http.StatusNotFound, "ticket-not-found")
	r = ana.do(http.MethodPost, tr, map[string]any{"email": "bia@example.com"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	waitUntil(t, 5*time.Second, func() bool {
		mail, err := os.ReadFile(filepath.Join(s.app.Config.Mailbox, fmt.Sprintf("transfer-%d-2.txt", ids[1])))
		return err == nil && strings.Contains(string(mail), "To: bia@example.com") && strings.Contains(string(mail), "/tickets")
	}, "the recipient's mail")
	r = scan(codes[1], "4")
	require.Equal(t, "void", r.Body["outcome"], string(r.Raw))
	requireRefusal(t, bia.do(http.MethodPost, tr, map[string]any{"email": "ana@example.com"}), http.StatusConflict, "transfer-not-allowed",
		"This ticket cannot be transferred: this ticket was already transferred the 1 time(s) the organizer allows.", "")
	_, biaCodes := myCodes(t, bia)
	require.Equal(t, "admitted", scan(biaCodes[0], "5").Body["outcome"])

	b := door.do(http.MethodGet, ev+"/scan-bundle", nil)
	require.Equal(t, http.StatusOK, b.Status, string(b.Raw))
	require.Len(t, b.Body["tickets"], 2)
	require.NotContains(t, string(b.Raw), "R1.", "the bundle holds keys that verify, no codes")
	require.Equal(t, http.StatusNotFound, bia.do(http.MethodGet, ev+"/scan-bundle", nil).Status)
}

// TestDoorRoutesHideOtherEvents: every entry route of the OpenAPI document
// under an event answers someone who is neither its organizer nor its door
// staff exactly as it answers for an event that does not exist (a 404), so
// an id reveals nothing, as on the console's routes.
func TestDoorRoutesHideOtherEvents(t *testing.T) {
	t.Parallel()
	_, ana, bob, someone := cast(t)
	anaEvent := createEvent(t, ana, importVenue(t, ana, venue.Stadium("Ana Door Arena", "Recife", 20, 5)), "Ana Door Show", false)
	bodies := map[string]any{
		"POST /api/events/{id}/checkins":      map[string]any{"code": "R1.x", "gate": "North", "scan_id": "s1"},
		"POST /api/events/{id}/checkins/sync": map[string]any{"gate": "North", "scans": []any{}},
		"POST /api/events/{id}/door-staff":    map[string]any{"email": "fan@example.com"},
		"PUT /api/events/{id}/entry":          map[string]any{"doors_open_at": nil, "static_codes": false, "transfers_allowed": true, "max_transfers": 3},
	}
	tested := 0
	for path, item := range loadOpenAPI(t).Paths.Map() {
		for method, op := range item.Operations() {
			route := method + " " + path
			if method == http.MethodHead || !slices.Contains(op.Tags, "entry") || !strings.HasPrefix(path, "/api/events/{id}") {
				continue
			}
			t.Run(route, func(t *testing.T) {
				body, ok := bodies[route]
				require.True(t, ok || op.RequestBody == nil, "%s takes a body: give bodies a valid one", route)
				at := func(id int64) string { return strings.Replace(path, "{id}", itoa(id), 1) }
				for _, who := range []*fan{bob, someone} {
					requireHidden(t, "event", [2]int64{anaEvent, 1 << 40}, func(id int64) response { return who.do(method, at(id), body) })
				}
			})
			tested++
		}
	}
	require.GreaterOrEqual(t, tested, 6, "the document's entry routes of an event")
}
