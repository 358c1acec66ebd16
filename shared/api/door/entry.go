package door

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/qr"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/token"
)

// Mount registers entry day: ticket codes travel only in bodies of
// authenticated requests, never in a URL (URLs are logged).
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("GET /api/me/tickets", s.myTickets)
	m.Route("GET /api/me/tickets/{id}", s.myTicket)
	m.Route("GET /api/me/door-events", s.myDoorEvents)
	m.Route("POST /api/tickets/{id}/transfer", s.transferTicket)
	m.Route("PUT /api/events/{id}/entry", s.setEntrySettings)
	m.Route("GET /api/events/{id}/door-staff", s.listDoorStaff)
	m.Route("POST /api/events/{id}/door-staff", s.grantDoorStaff)
	m.Route("DELETE /api/events/{id}/door-staff/{staff}", s.revokeDoorStaff)
	m.Route("POST /api/events/{id}/checkins", s.checkIn)
	m.Route("GET /api/events/{id}/checkins", s.checkInStats)
	m.Route("POST /api/events/{id}/checkins/sync", s.syncCheckIns)
	m.Route("GET /api/events/{id}/scan-bundle", s.scanBundle)
}

// ticketView adds the QR module matrix to each code, which the page
// paints: a few hundred bytes, no image library on either side.
type ticketView struct {
	entry.Ticket
	Codes  []codeView `json:"codes,omitempty"`
	Static *codeView  `json:"static_code,omitempty"`
}

type codeView struct {
	entry.TimedCode
	QR qr.Matrix `json:"qr"`
}

func viewCode(c entry.TimedCode) (codeView, error) {
	m, err := qr.Encode(c.Code)
	return codeView{TimedCode: c, QR: m}, err
}

func viewTicket(t entry.Ticket) (ticketView, error) {
	v := ticketView{Ticket: t, Codes: make([]codeView, len(t.Codes))}
	for i, c := range t.Codes {
		var err error
		if v.Codes[i], err = viewCode(c); err != nil {
			return v, err
		}
	}
	if t.Static != "" {
		c, err := viewCode(entry.TimedCode{Code: t.Static})
		if err != nil {
			return v, err
		}
		v.Static = &c
	}
	return v, nil
}

// myDoorEvents serves GET /api/me/door-events: the events whose doors the
// caller was granted, for the door staff's link to their door pages.
func (s *Handlers) myDoorEvents(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.Auth.Session(r)
	if err != nil {
		return err
	}
	events, err := s.Entry.DoorEvents(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"events": events})
	return nil
}

// myTickets serves GET /api/me/tickets: a page of the caller's tickets,
// with codes only for events near their doors.
func (s *Handlers) myTickets(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.Auth.Session(r)
	if err != nil {
		return err
	}
	limit, err := web.QueryLimit(r, 20, entry.MaxPage, "tickets per page")
	if err != nil {
		return err
	}
	page, err := s.Entry.Page(r.Context(), sess.Account, r.URL.Query().Get("cursor"), limit)
	if err != nil {
		return err
	}
	out := make([]ticketView, len(page.Tickets))
	for i, t := range page.Tickets {
		if out[i], err = viewTicket(t); err != nil {
			return err
		}
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"tickets": out, "next_cursor": page.Next, "now": s.Entry.Now().UTC()})
	return nil
}

// myTicket serves GET /api/me/tickets/{id}: one of the caller's tickets
// with its codes of the next minute, as a fan opens it.
func (s *Handlers) myTicket(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	t, err := s.Entry.Ticket(r.Context(), sess.Account, id)
	if err != nil {
		return err
	}
	v, err := viewTicket(t)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"ticket": v, "now": s.Entry.Now().UTC()})
	return nil
}

// maxEmail is the longest address an account can have (RFC 5321).
const maxEmail = 254

// emailRequest reads the session, the path id and a {"email"} body.
func (s *Handlers) emailRequest(r *http.Request) (token.Claims, int64, string, error) {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return sess, id, "", err
	}
	var body struct {
		Email string `json:"email"`
	}
	if err := web.Decode(r, &body); err != nil {
		return sess, id, "", err
	}
	// Trimmed as at log-in: a pasted address often carries spaces.
	email := strings.TrimSpace(body.Email)
	if email == "" {
		return sess, id, "", problem.New(http.StatusBadRequest, "invalid-field", `Send the person's email address: {"email": "..."}.`)
	}
	if len(email) > maxEmail {
		// Longer than any account's: refused before a lookup.
		return sess, id, "", problem.New(http.StatusBadRequest, "invalid-field", fmt.Sprintf("An email address has at most %d bytes.", maxEmail))
	}
	return sess, id, email, nil
}

// transferTicket serves POST /api/tickets/{id}/transfer, throttled per
// address as sign-up is: a holder may learn whether an email has an
// account. The answer echoes the email sent, never the recipient's name.
func (s *Handlers) transferTicket(w http.ResponseWriter, r *http.Request) error {
	sess, id, email, err := s.emailRequest(r)
	if err != nil {
		return err
	}
	if err := s.Limits.IP(r, "transfer"); err != nil {
		return err
	}
	if err := s.Entry.Transfer(r.Context(), id, sess.Account, email); err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"ticket_id": id, "to": email})
	return nil
}

// entrySettings are entry rules as PUT sends them: they replace the
// event's as a whole, so every member is sent (doors_open_at may be null);
// {"max_transfers": 3} alone would also turn transfers off.
type entrySettings entry.Settings

func (*entrySettings) CheckMembers(sent web.Members) error {
	for _, m := range []string{"doors_open_at", "static_codes", "transfers_allowed", "max_transfers"} {
		if !sent.Has(m) {
			return web.Refused(reject.New(entry.ErrBadSettings, "/"+m, fmt.Sprintf(
				"Send %q: the entry rules are replaced as a whole (doors_open_at may be null).", m)), http.StatusBadRequest, "invalid-settings")
		}
	}
	return nil
}

func (s *Handlers) setEntrySettings(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	var body entrySettings
	if err := web.Decode(r, &body); err != nil {
		return err
	}
	v, err := s.Entry.SetSettings(r.Context(), id, sess.Account, entry.Settings(body))
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

// grantDoorStaff answers 201 with a new grant, 200 with the one there was.
func (s *Handlers) grantDoorStaff(w http.ResponseWriter, r *http.Request) error {
	sess, id, email, err := s.emailRequest(r)
	if err != nil {
		return err
	}
	g, created, err := s.Entry.Grant(r.Context(), id, sess.Account, email)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	web.WriteJSON(w, status, g)
	return nil
}

func (s *Handlers) listDoorStaff(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	staff, err := s.Entry.DoorStaff(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"staff": staff})
	return nil
}

func (s *Handlers) revokeDoorStaff(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	staff, err := web.PathID(r, "staff")
	if err != nil {
		return err
	}
	if err := s.Entry.Revoke(r.Context(), id, sess.Account, staff); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// door is sessionAndID for the door: the caller must be door staff of the
// event (or its organizer).
func (s *Handlers) door(r *http.Request) (entry.Door, error) {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return entry.Door{}, err
	}
	return s.Entry.Staff(r.Context(), id, sess.Account)
}

type scanRequest struct {
	// Code is a pointer: a scan without one is a malformed request, not
	// an invalid code.
	Code   *string `json:"code"`
	Gate   string  `json:"gate"`
	ScanID string  `json:"scan_id"`
}

// errNoCode refuses a scan that carries no code (at pointer).
func errNoCode(pointer string) error {
	const detail = `Send the code the gate read: "code" is missing, null or empty.`
	return problem.New(http.StatusBadRequest, "invalid-code", detail).With("errors", []reject.Reason{{Detail: detail, Pointer: pointer}})
}

// checkIn serves POST /api/events/{id}/checkins: every answer about the
// ticket is a 200 with an outcome; only a malformed request is a problem.
func (s *Handlers) checkIn(w http.ResponseWriter, r *http.Request) error {
	d, err := s.door(r)
	if err != nil {
		return err
	}
	var req scanRequest
	if err := web.Decode(r, &req); err != nil {
		return err
	}
	if req.Code == nil || *req.Code == "" {
		return errNoCode("/code")
	}
	res, err := s.Entry.Check(r.Context(), d, entry.Scan{Gate: req.Gate, ID: req.ScanID, Code: *req.Code})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, res)
	return nil
}

// checkInStats serves GET /api/events/{id}/checkins: the door's counts
// and conflicts; the organizer also gets the entry settings to edit.
func (s *Handlers) checkInStats(w http.ResponseWriter, r *http.Request) error {
	d, err := s.door(r)
	if err != nil {
		return err
	}
	st, err := s.Entry.Stats(r.Context(), d.Event)
	if err != nil {
		return err
	}
	res := struct {
		entry.Stats
		Settings *entry.Settings `json:"settings,omitempty"`
	}{Stats: st}
	if d.Organizer {
		v, err := s.Entry.Settings(r.Context(), d.Event)
		if err != nil {
			return err
		}
		res.Settings = &v
	}
	web.WriteJSON(w, http.StatusOK, res)
	return nil
}

// syncCheckIns serves POST /api/events/{id}/checkins/sync: the admissions
// an offline gate made, replayed in order; safe to send again.
func (s *Handlers) syncCheckIns(w http.ResponseWriter, r *http.Request) error {
	d, err := s.door(r)
	if err != nil {
		return err
	}
	var body struct {
		Gate  string `json:"gate"`
		Scans []struct {
			ScanID    string    `json:"scan_id"`
			Code      *string   `json:"code"`
			ScannedAt time.Time `json:"scanned_at"`
		} `json:"scans"`
	}
	if err := web.Decode(r, &body); err != nil {
		return err
	}
	if body.Gate == "" || body.Scans == nil {
		return problem.New(http.StatusBadRequest, "invalid-sync", `Send "gate" (the gate's name) and "scans" (the scans made offline, maybe none).`)
	}
	scans := make([]entry.Scan, len(body.Scans))
	for i, sc := range body.Scans {
		if sc.Code == nil || *sc.Code == "" {
			return errNoCode(fmt.Sprintf("/scans/%d/code", i))
		}
		scans[i] = entry.Scan{ID: sc.ScanID, Code: *sc.Code, At: sc.ScannedAt}
	}
	res, err := s.Entry.Sync(r.Context(), d, body.Gate, scans)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"results": res})
	return nil
}

func (s *Handlers) scanBundle(w http.ResponseWriter, r *http.Request) error {
	d, err := s.door(r)
	if err != nil {
		return err
	}
	b, err := s.Entry.Bundle(r.Context(), d)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, b)
	return nil
}

// EntryError maps entry sentinels to problems.
func EntryError(err error) error {
	switch {
	case errors.Is(err, entry.ErrNotFound):
		return problem.New(http.StatusNotFound, "ticket-not-found", "No such ticket among yours.")
	case errors.Is(err, entry.ErrNotOwner):
		// As another organizer's events elsewhere: not found, whether or not it exists.
		return problem.New(http.StatusNotFound, "event-not-found", "No such event among the events you organize.")
	case errors.Is(err, entry.ErrNotStaff):
		// Whether or not the event exists, as for another organizer's events.
		return problem.New(http.StatusNotFound, "event-not-found",
			"No such event among those whose doors you work: check the event, or ask its organizer to add you as door staff.")
	case errors.Is(err, entry.ErrNoAccount):
		return problem.New(http.StatusNotFound, "account-not-found", "No account uses that email; ask them to sign up first.")
	case errors.Is(err, entry.ErrNoStaff):
		return problem.New(http.StatusNotFound, "staff-not-found", "No such door staff at this event: perhaps already revoked. Reload the list.")
	case errors.Is(err, entry.ErrNoTransfer):
		return web.Refused(err, http.StatusConflict, "transfer-not-allowed")
	case errors.Is(err, entry.ErrBadGate):
		return problem.New(http.StatusBadRequest, "invalid-gate", "Name the gate in 1 to 40 characters on one line.")
	case errors.Is(err, entry.ErrBadScanID):
		return problem.New(http.StatusBadRequest, "invalid-scan-id", "Send a scan_id (1 to 64 characters) that is new for each scan.")
	case errors.Is(err, entry.ErrTooManyScans):
		return problem.New(http.StatusRequestEntityTooLarge, "too-many-scans", fmt.Sprintf("Sync at most %d scans per request.", entry.MaxSync))
	case errors.Is(err, entry.ErrBadSettings):
		return web.Refused(err, http.StatusBadRequest, "invalid-settings")
	case errors.Is(err, entry.ErrCancelled):
		// The problem type of every other change of a cancelled event.
		return web.Refused(err, http.StatusBadRequest, "invalid-event")
	}
	return nil
}
