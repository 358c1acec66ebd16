package api_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/dev/pspsim"
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
