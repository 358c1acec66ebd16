package api_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/pspsim"
)

// Attacks of an outsider and a confused fan through the public API.

// An email address written with look-alike characters is refused, naming
// the address it looks like: PostgreSQL's lower() folds the Kelvin sign
// (U+212A) to "k", so "\u212Aate@example.com" took kate@example.com's place
// (her sign-up answered "already exists", her email logged into the
// squatter's account), and fullwidth or mixed-alphabet addresses read as
// someone else's in the organizer's search and exports.
func TestEmailsWithLookAlikeCharactersAreRefused(t *testing.T) {
	t.Parallel()
	srv := serve(t, apptest.New(t, 1))
	signUp := func(email string) response {
		return newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": "a long enough password", "name": "Fan"})
	}
	for email, detail := range map[string]string{
		"\u212Aate@example.com":      "Invalid account data: \"\u212Aate@example.com\" has characters that only look like letters (U+212A); type it as \"Kate@example.com\".",
		"\uff54\uff41bs@example.com": "Invalid account data: \"\uff54\uff41bs@example.com\" has characters that only look like letters (U+FF54, U+FF41); type it as \"tabs@example.com\".",
		"ana@\u212Bngstrom.com":      "Invalid account data: \"ana@\u212Bngstrom.com\" has characters that only look like letters (U+212B); type it as \"ana@\u00c5ngstrom.com\".",
		"t\u0430bs@example.com":      "Invalid account data: \"t\u0430bs@example.com\" mixes letters of different alphabets in \"t\u0430bs\"; type the address again.",
		"tabs@ex\u0430mple.com":      "Invalid account data: \"tabs@ex\u0430mple.com\" mixes letters of different alphabets in \"ex\u0430mple\"; type the address again.",
		"\u03bf\u03b1@example.com":   "",
	} {
		r := signUp(email)
		if detail == "" {
			require.Equal(t, http.StatusCreated, r.Status, "%q: one alphabet per word is an address: %s", email, r.Raw)
			continue
		}
		requireRefusal(t, r, http.StatusBadRequest, "invalid-account", detail, "/email")
	}
	require.Equal(t, http.StatusCreated, signUp("kate@example.com").Status, "nobody took her address")
	require.Equal(t, http.StatusCreated, signUp("jo\u00e3o@example.com").Status, "accented Latin is one alphabet")
}

// A name is one line of visible text: a name with a line break wrote
// headers of its own into the mail that tells a ticket's recipient who sent
// it ("Subject: Eve\r\nBcc: …"), and a direction override showed it
// backwards in the organizer's console.
func TestNamesWithControlCharactersAreRefused(t *testing.T) {
	t.Parallel()
	srv := serve(t, apptest.New(t, 1))
	for i, name := range []string{"Eve\r\nBcc: all@example.com", "Eve\nMallory", "Eve\tTab", "\u202eevE", "Eve\u2066x", "Eve\x1b[31m"} {
		r := newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": fmt.Sprintf("eve%d@example.com", i), "password": "a long enough password", "name": name})
		requireRefusal(t, r, http.StatusBadRequest, "invalid-account",
			fmt.Sprintf("Invalid account data: name %q has a line break or control character; write it on one line.", name), "/name")
	}
	r := newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": "family@example.com", "password": "a long enough password", "name": "Ana \U0001F468\u200d\U0001F469\u200d\U0001F467"})
	require.Equal(t, http.StatusCreated, r.Status, "an emoji sequence joins with U+200D: %s", r.Raw)
}

// A password is the same password however the keyboard composed its
// accents (NFC "ã" or NFD "a" + U+0303, as NIST SP 800-63B asks): a fan
// who signed up on one device could not log in from another.
func TestPasswordsMatchHoweverTheirAccentsAreComposed(t *testing.T) {
	t.Parallel()
	srv := serve(t, apptest.New(t, 1))
	composed, decomposed := "a senha de S\u00e3o Jo\u00e3o", "a senha de Sa\u0303o Joa\u0303o"
	for i, pw := range [][2]string{{composed, decomposed}, {decomposed, composed}} {
		email := fmt.Sprintf("accents%d@example.com", i)
		r := newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": pw[0], "name": "Fan"})
		require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
		r = newFan(t, srv).do(http.MethodPost, "/api/session", map[string]any{"email": email, "password": pw[1]})
		require.Equal(t, http.StatusOK, r.Status, "%+q then %+q: %s", pw[0], pw[1], r.Raw)
	}
}

// Every 503 says when to come back: with Redis down, logging out and the
// live stream answered 503 without Retry-After, so clients retried at once
// or never.
func TestUnavailableAnswersSayWhenToRetry(t *testing.T) {
	t.Parallel()
	port, err := localenv.FreePort() // nothing listens there: Redis is down
	require.NoError(t, err)
	a := apptest.New(t, 1, func(c *config.Config) { c.RedisAddr = "127.0.0.1:" + strconv.Itoa(port) })
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	ev := createEvent(t, o, importVenue(t, o, venue.Stadium("Arena", "Belém", 10, 10)), "Show", false)
	for _, r := range []response{
		o.do(http.MethodGet, "/api/events/"+itoa(ev)+"/stream", nil),
		o.do(http.MethodDelete, "/api/session", nil),
	} {
		require.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Raw))
		require.NotEmpty(t, r.Header.Get("Retry-After"), string(r.Raw))
	}
}

// A transfer or a door-staff grant without an email address asks for one:
// it answered 404 "No account uses that email; ask them to sign up first".
func TestEmailRequestsWithoutAnEmailAskForOne(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "e1", s.seats[0])
	ids, _ := myCodes(t, ana)
	for _, c := range []struct {
		who  *fan
		path string
	}{
		{ana, "/api/tickets/" + itoa(ids[0]) + "/transfer"},
		{s.organizerOf(t), "/api/events/" + itoa(s.eventID) + "/door-staff"},
	} {
		for _, body := range []map[string]any{{}, {"email": "  "}} {
			requireProblem(t, c.who.do(http.MethodPost, c.path, body), http.StatusBadRequest, "invalid-field")
		}
	}
}

// A transfer's mail goes to the recipient's address as their account has
// it, not as the sender typed it: the account is found ignoring case (and
// whatever else the catalog's lower() folds), so a typed address could name
// a mailbox the recipient does not own.
func TestTransferMailGoesToTheRecipientsAddress(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	newFan(t, s.srv).signUp("bia@example.com")
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	s.paidTickets(t, ana, "t1", s.seats[0])
	ids, _ := myCodes(t, ana)
	r := ana.do(http.MethodPost, "/api/tickets/"+itoa(ids[0])+"/transfer", map[string]any{"email": "BIA@Example.COM"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	var mail []byte
	waitUntil(t, 5*time.Second, func() bool {
		mail, _ = os.ReadFile(filepath.Join(s.app.Config.Mailbox, fmt.Sprintf("transfer-%d-2.txt", ids[0])))
		return mail != nil
	}, "the recipient's mail")
	require.Contains(t, string(mail), "To: bia@example.com\n")
}

// doorStaff signs up an account and makes it door staff of the event.
func (s *shop) doorStaff(t testing.TB, email string) *fan {
	t.Helper()
	door := newFan(t, s.srv)
	door.signUp(email)
	r := s.organizerOf(t).do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/door-staff", map[string]any{"email": email})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	return door
}

// A gate is named on one line: "North\r\nX" was recorded, and came back in
// the messages other gates show for a conflict ("gate North\r\nX admitted
// it first").
func TestGatesAreNamedOnOneLine(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	door := s.doorStaff(t, "door@example.com")
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	ev := "/api/events/" + itoa(s.eventID)
	s.paidTickets(t, ana, "g1", s.seats[0])
	_, codes := myCodes(t, ana)
	for _, gate := range []string{"North\r\nX", "North\tGate", "\u202eNorth"} {
		requireProblem(t, door.do(http.MethodPost, ev+"/checkins", map[string]any{"code": codes[0], "gate": gate, "scan_id": "s-" + gate}),
			http.StatusBadRequest, "invalid-gate")
		requireProblem(t, door.do(http.MethodPost, ev+"/checkins/sync", map[string]any{"gate": gate, "scans": []map[string]any{{"code": codes[0], "scan_id": "y-" + gate, "scanned_at": time.Now()}}}),
			http.StatusBadRequest, "invalid-gate")
	}
}

// An event's name, city and category are one line each: an event named
// "Evil\r\nSet-Cookie: x=1" was created, and the name travels to search
// results, ticket pages and the organizer's order search.
func TestEventNamesAreOneLine(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Arena", "Recife", 10, 10))
	for _, c := range []struct{ name, extra, pointer string }{
		{`Evil\r\nSet-Cookie: x=1`, "", "/name"},
		{"Show", `,"city":"Recife\u202e"`, "/city"},
		{"Show", `,"category":"music\n"`, "/category"},
	} {
		r := ana.send(http.MethodPost, "/api/events", "application/json", eventBody(venueID, c.name, c.extra+fourLevels))
		requireProblem(t, r, http.StatusBadRequest, "invalid-event")
		require.Equal(t, c.pointer, r.Body["errors"].([]any)[0].(map[string]any)["pointer"], string(r.Raw))
	}
}
