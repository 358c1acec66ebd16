package api_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/pspsim"
)

// ticketPage reads one page of f's ticket list.
func ticketPage(t testing.TB, f *fan, query string) (tickets []map[string]any, next string) {
	t.Helper()
	r := f.do(http.MethodGet, "/api/me/tickets"+query, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	for _, x := range r.Body["tickets"].([]any) {
		tickets = append(tickets, x.(map[string]any))
	}
	next, _ = r.Body["next_cursor"].(string)
	return tickets, next
}

// requireCodes checks a ticket's codes: now and the next minute, each
// with the modules of its QR code.
func requireCodes(t *testing.T, tk map[string]any) []string {
	t.Helper()
	list, _ := tk["codes"].([]any)
	require.Len(t, list, 5, "now and the next minute")
	var codes []string
	for _, x := range list {
		c := x.(map[string]any)
		m := c["qr"].(map[string]any)
		size := int(m["size"].(float64))
		bits, err := base64.StdEncoding.DecodeString(m["modules"].(string))
		require.NoError(t, err)
		require.Len(t, bits, (size*size+7)/8, "one bit a module")
		codes = append(codes, c["code"].(string))
	}
	return codes
}

// TestTicketListIsPagedAndLight: the list comes a page at a time without
// codes until the event's doors are near; one ticket opened has its codes;
// another fan's ticket, or one sent away, is not found; a cancelled
// event's tickets are void with no code; bad parameters are 400s.
func TestTicketListIsPagedAndLight(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, bia, org := newFan(t, s.srv), newFan(t, s.srv), newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	require.Equal(t, http.StatusOK, org.do(http.MethodPost, "/api/session", map[string]any{"email": "org@example.com", "password": "a long enough password"}).Status)
	s.paidTickets(t, ana, "p1", s.seats[:3]...)

	first, next := ticketPage(t, ana, "?limit=2")
	require.Len(t, first, 2)
	require.NotEmpty(t, next)
	rest, last := ticketPage(t, ana, "?limit=2&cursor="+url.QueryEscape(next))
	require.Len(t, rest, 1)
	require.Empty(t, last)
	all := append(first, rest...)
	for _, tk := range all {
		require.Empty(t, tk["codes"], "the event is three days away: no codes in the list")
		require.Equal(t, "Paid Show", tk["event_name"])
		require.NotEmpty(t, tk["live_from"])
	}
	id := itoa(int64(all[2]["id"].(float64)))
	r := ana.do(http.MethodGet, "/api/me/tickets/"+id, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "no-store", r.Header.Get("Cache-Control"))
	requireCodes(t, r.Body["ticket"].(map[string]any))
	requireProblem(t, bia.do(http.MethodGet, "/api/me/tickets/"+id, nil), http.StatusNotFound, "ticket-not-found")
	requireProblem(t, bia.do(http.MethodGet, "/api/me/tickets/"+itoa(1<<40), nil), http.StatusNotFound, "ticket-not-found")
	require.Equal(t, http.StatusUnauthorized, newFan(t, s.srv).do(http.MethodGet, "/api/me/tickets/"+id, nil).Status)

	// Doors open within the hours ahead: the list carries the codes.
	ev := "/api/events/" + itoa(s.eventID)
	doors := time.Now().UTC().Add(time.Hour)
	r = org.do(http.MethodPut, ev+"/entry", map[string]any{"doors_open_at": doors, "static_codes": false, "transfers_allowed": true, "max_transfers": 1})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	live, _ := ticketPage(t, ana, "")
	require.Len(t, live, 3)
	for _, tk := range live {
		requireCodes(t, tk)
	}

	// Sent to Bia: Ana's page and her opened ticket no longer have it.
	require.Equal(t, http.StatusOK, ana.do(http.MethodPost, "/api/tickets/"+id+"/transfer", map[string]any{"email": "bia@example.com"}).Status)
	requireProblem(t, ana.do(http.MethodGet, "/api/me/tickets/"+id, nil), http.StatusNotFound, "ticket-not-found")
	mine, _ := ticketPage(t, ana, "")
	require.Len(t, mine, 2)
	r = bia.do(http.MethodGet, "/api/me/tickets/"+id, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	requireCodes(t, r.Body["ticket"].(map[string]any))

	for _, q := range []string{"?limit=-1", "?limit=0", "?limit=51", "?limit=1000000000000", "?limit=99999999999999999999", "?limit=two",
		"?limit=1&limit=2", "?cursor=garbage", "?cursor=" + next + "&cursor=" + next, "?cursor=%FF"} {
		requireProblem(t, ana.do(http.MethodGet, "/api/me/tickets"+q, nil), http.StatusBadRequest, map[bool]string{true: "invalid-cursor", false: "invalid-parameter"}[q == "?cursor=garbage"])
	}

	// The event is cancelled: every ticket is void, with no code anywhere.
	r = org.do(http.MethodPut, ev+"/status", map[string]any{"status": "cancelled"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	waitUntil(t, 10*time.Second, func() bool {
		void, _ := ticketPage(t, ana, "")
		for _, tk := range void {
			if tk["status"] != "void" || tk["codes"] != nil {
				return false
			}
		}
		return len(void) == 2
	}, "Ana's tickets void")
	r = bia.do(http.MethodGet, "/api/me/tickets/"+id, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "void", r.Body["ticket"].(map[string]any)["status"])
	require.Nil(t, r.Body["ticket"].(map[string]any)["codes"])
}
