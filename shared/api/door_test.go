package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/pspsim"
)

// A scan id answers a retry of the same scan, not another gate's scan that
// happens to reuse it: two gates numbering their scans 1, 2, 3… admitted
// one ticket twice, the second "Admitted." as a replay of the first.
func TestScanIDsOfOtherGatesAdmitNobody(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	north := s.doorStaff(t, "north@example.com")
	south := s.doorStaff(t, "south@example.com")
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "a", s.seats[0], s.seats[1])
	_, codes := myCodes(t, ana)
	ev := "/api/events/" + itoa(s.eventID)
	scan := func(door *fan, gate, code string) response {
		return door.do(http.MethodPost, ev+"/checkins", map[string]any{"code": code, "gate": gate, "scan_id": "1"})
	}
	require.Equal(t, "admitted", scan(north, "North", codes[0]).Body["outcome"])
	require.Equal(t, "admitted", scan(north, "North", codes[0]).Body["outcome"], "the same gate's retry")
	for _, again := range []response{scan(south, "South", codes[0]), scan(south, "North", codes[0]), scan(north, "South", codes[0])} {
		require.Equal(t, "already-used", again.Body["outcome"], string(again.Raw))
	}

	// Offline gates syncing scans with the same id: the second is a conflict.
	sync := func(door *fan, gate string) response {
		return door.do(http.MethodPost, ev+"/checkins/sync", map[string]any{"gate": gate,
			"scans": []map[string]any{{"code": codes[1], "scan_id": "7", "scanned_at": time.Now()}}})
	}
	require.Equal(t, "admitted", sync(north, "North").Body["results"].([]any)[0].(map[string]any)["outcome"])
	r := sync(south, "South")
	require.Equal(t, "conflict", r.Body["results"].([]any)[0].(map[string]any)["outcome"], string(r.Raw))
}

// A ticket transferred while its old code is at the gate is either
// admitted (and then not transferable: it was used) or void at the gate,
// never both: the scan read the ticket, the transfer committed, and the
// scan admitted the old holder's code of a ticket now someone else's.
func TestTransferAndScanOfOneTicketDoNotBothWin(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	door := s.doorStaff(t, "door@example.com")
	newFan(t, s.srv).signUp("to@example.com")
	ev := "/api/events/" + itoa(s.eventID)
	for round := range 4 {
		f := newFan(t, s.srv)
		f.signUp("from" + itoa(int64(round)) + "@example.com")
		s.paidTickets(t, f, "k", s.seats[3*round:3*round+3]...)
		ids, codes := myCodes(t, f)
		for i, id := range ids {
			var transfer, scan response
			var wg sync.WaitGroup
			wg.Go(func() {
				transfer = f.do(http.MethodPost, "/api/tickets/"+itoa(id)+"/transfer", map[string]any{"email": "to@example.com"})
			})
			wg.Go(func() {
				scan = door.do(http.MethodPost, ev+"/checkins", map[string]any{"code": codes[i], "gate": "North", "scan_id": "s" + itoa(id)})
			})
			wg.Wait()
			require.False(t, transfer.Status == http.StatusOK && scan.Body["outcome"] == "admitted",
				"ticket %d was transferred and its old code admitted", id)
			require.Contains(t, []int{http.StatusOK, http.StatusConflict}, transfer.Status, string(transfer.Raw))
		}
	}
}

// An email pasted with spaces around it names the same account it logs in
// to: a transfer to " bia@example.com " said no account used that email.
func TestEmailsAroundSpacesNameTheirAccount(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	newFan(t, s.srv).signUp("bia@example.com")
	newFan(t, s.srv).signUp("door@example.com")
	s.paidTickets(t, ana, "a", s.seats[0])
	ids, _ := myCodes(t, ana)
	r := ana.do(http.MethodPost, "/api/tickets/"+itoa(ids[0])+"/transfer", map[string]any{"email": " Bia@example.com\t"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = s.organizerOf(t).do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/door-staff", map[string]any{"email": "door@example.com "})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
}

// An organizer demoted to fan with a session still valid kept the door of
// every event they had created: entry rules, door staff, scans, sync and
// the scan bundle with every holder's name and seat. The role is read at
// each request, as on the console's routes.
func TestDemotedOrganizersLoseTheDoor(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	door := s.doorStaff(t, "door@example.com")
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "a", s.seats[0])
	_, codes := myCodes(t, ana)
	ev := "/api/events/" + itoa(s.eventID)
	_, err := s.app.Catalog.Exec(context.Background(), `UPDATE accounts SET role = 'fan' WHERE email = 'org@example.com'`)
	require.NoError(t, err)

	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPut, ev + "/entry", map[string]any{"doors_open_at": nil, "static_codes": true, "transfers_allowed": true, "max_transfers": 9}},
		{http.MethodGet, ev + "/door-staff", nil},
		{http.MethodPost, ev + "/door-staff", map[string]any{"email": "ana@example.com"}},
		{http.MethodDelete, ev + "/door-staff/1", nil},
		{http.MethodGet, ev + "/scan-bundle", nil},
		{http.MethodGet, ev + "/checkins", nil},
		{http.MethodPost, ev + "/checkins", map[string]any{"code": codes[0], "gate": "Mine", "scan_id": "1"}},
		{http.MethodPost, ev + "/checkins/sync", map[string]any{"gate": "Mine", "scans": []map[string]any{{"code": codes[0], "scan_id": "2", "scanned_at": time.Now()}}}},
	} {
		requireProblem(t, org.do(c.method, c.path, c.body), http.StatusNotFound, "event-not-found")
	}
	r := door.do(http.MethodPost, ev+"/checkins", map[string]any{"code": codes[0], "gate": "North", "scan_id": "1"})
	require.Equal(t, "admitted", r.Body["outcome"], "the staff they granted still work: %s", r.Raw)
}

// A scan without a code is a malformed request, not an invalid ticket: it
// answered 200 "invalid" as if a code had been read.
func TestScansWithoutACodeAreRefused(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	door := s.doorStaff(t, "door@example.com")
	ev := "/api/events/" + itoa(s.eventID)
	for _, body := range []map[string]any{{"gate": "North", "scan_id": "1"}, {"code": nil, "gate": "North", "scan_id": "2"}, {"code": "", "gate": "North", "scan_id": "3"}} {
		requireRefusal(t, door.do(http.MethodPost, ev+"/checkins", body), http.StatusBadRequest, "invalid-code",
			`Send the code the gate read: "code" is missing, null or empty.`, "/code")
		delete(body, "gate")
		r := door.do(http.MethodPost, ev+"/checkins/sync", map[string]any{"gate": "North", "scans": []map[string]any{
			{"code": "R1.1.1.1.X", "scan_id": "0", "scanned_at": time.Now()}, body}})
		requireRefusal(t, r, http.StatusBadRequest, "invalid-code", `Send the code the gate read: "code" is missing, null or empty.`, "/scans/1/code")
	}
}

// A ticket that cannot be sent on told its holder, for any email, whether
// it had an account (409 for one, 404 account-not-found otherwise), as
// often as they liked; a sent ticket's answer named the recipient. The
// ticket is checked first, the route is throttled per address as sign-up
// is, and the answer echoes the email as typed.
func TestTransfersTellNothingOfTheRecipient(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	door := s.doorStaff(t, "door@example.com")
	newFan(t, s.srv).signUp("bia@example.com")
	s.named(t, "bia@example.com", "Beatriz Secret")
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "a", s.seats[0], s.seats[1])
	ids, codes := myCodes(t, ana)
	r := door.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/checkins", map[string]any{"code": codes[0], "gate": "North", "scan_id": "1"})
	require.Equal(t, "admitted", r.Body["outcome"], string(r.Raw))

	for _, email := range []string{"bia@example.com", "nobody@example.com"} {
		r := ana.do(http.MethodPost, "/api/tickets/"+itoa(ids[0])+"/transfer", map[string]any{"email": email})
		requireProblem(t, r, http.StatusConflict, "transfer-not-allowed")
		require.Contains(t, r.Body["detail"], "already used", email)
	}
	r = ana.do(http.MethodPost, "/api/tickets/"+itoa(ids[1])+"/transfer", map[string]any{"email": " Bia@Example.com"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "Bia@Example.com", r.Body["to"], "the email as the holder typed it")
	require.NotContains(t, string(r.Raw), "Beatriz")
}

// TestTransfersAreThrottled: one address trying emails on transfers is
// bounded as sign-up is (CATRACA_AUTH_PER_IP a minute).
func TestTransfersAreThrottled(t *testing.T) {
	t.Parallel()
	const perIP = 5
	srv := serve(t, apptest.New(t, 1, func(c *config.Config) { c.AuthPerIP = perIP }))
	f := newFan(t, srv)
	f.signUp("ana@example.com")
	f.header.Set("CloudFront-Viewer-Address", "198.51.100.7:443")
	limited := 0
	for i := range perIP + 5 {
		r := f.do(http.MethodPost, "/api/tickets/1/transfer", map[string]any{"email": "guess" + itoa(int64(i)) + "@example.com"})
		if r.Status == http.StatusTooManyRequests {
			requireProblem(t, r, http.StatusTooManyRequests, "too-many-attempts")
			limited++
			continue
		}
		requireProblem(t, r, http.StatusNotFound, "ticket-not-found")
	}
	require.Greater(t, limited, 0, "one address cannot try unlimited transfers")
	require.LessOrEqual(t, limited, 5, "an address's first %d transfers of a minute pass", perIP)
}
