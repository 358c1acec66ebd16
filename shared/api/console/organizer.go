package console

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/catraca/catraca/shared/api/read"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/shared/venue"
)

// organizerSession returns the caller's session if they are an organizer
// now (web.Auth.OrganizerSession).
func (s *Handlers) organizerSession(r *http.Request) (token.Claims, error) {
	return s.Auth.OrganizerSession(r)
}

// organizerAndID is sessionAndID for organizer routes.
func (s *Handlers) organizerAndID(r *http.Request) (token.Claims, int64, error) {
	sess, err := s.organizerSession(r)
	if err != nil {
		return sess, 0, err
	}
	id, err := web.PathID(r, "id")
	return sess, id, err
}

type layoutSummary struct {
	VenueID   int64 `json:"venue_id"`
	Version   int   `json:"version"`
	SeatCount int   `json:"seat_count"`
	Sections  int   `json:"sections"`
}

// importLayout serves POST /api/venues (new venue) and
// POST /api/venues/{id}/layouts (next version of a venue). The body is the
// layout's JSON or, as text/csv, a seat list (venue.FromCSV) named by the
// name and city parameters. With ?dry_run=true nothing is stored: the
// answer is the map as the seat map draws it, to preview.
func (s *Handlers) importLayout(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	var venueID int64
	if r.PathValue("id") != "" {
		if venueID, err = web.PathID(r, "id"); err != nil {
			return err
		}
	}
	l, err := s.layoutBody(r, venueID)
	if err != nil {
		return err
	}
	if dry := r.URL.Query().Get("dry_run"); dry == "true" {
		if err := l.Validate(); err != nil {
			return err
		}
		l.VenueID = venueID
		web.WriteJSON(w, http.StatusOK, read.CompactLayout(l))
		return nil
	} else if dry != "" && dry != "false" {
		return problem.New(http.StatusBadRequest, "invalid-parameter", "Parameter dry_run must be true or false.")
	}
	stored, err := s.Organizer.ImportLayoutAs(r.Context(), sess.Account, venueID, l)
	if errors.Is(err, venue.ErrNotFound) {
		// Another organizer's venue too, as if it did not exist.
		return problem.New(http.StatusNotFound, "venue-not-found",
			"You have no venue "+web.Itoa(venueID)+". Import your layout as a new venue (POST /api/venues).")
	}
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, layoutSummary{VenueID: stored.VenueID, Version: stored.Version,
		SeatCount: stored.SeatCount(), Sections: len(stored.Sections)})
	return nil
}

// layoutBody reads a layout sent as JSON or as a CSV seat list; a new
// version's list is named like its venue unless the request says.
func (s *Handlers) layoutBody(r *http.Request, venueID int64) (venue.Layout, error) {
	var l venue.Layout
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "text/csv" {
		return l, web.Decode(r, &l)
	}
	body, err := io.ReadAll(r.Body)
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return l, problem.New(http.StatusRequestEntityTooLarge, "body-too-large", fmt.Sprintf("The body is larger than %d bytes.", maxErr.Limit))
	} else if err != nil {
		return l, err
	}
	if !web.ValidText(string(body)) {
		return l, problem.New(http.StatusBadRequest, "invalid-text", "The CSV must be UTF-8 text without NUL characters.")
	}
	name, city := r.URL.Query().Get("name"), r.URL.Query().Get("city")
	if venueID > 0 && (name == "" || city == "") {
		n, c, err := s.Venues.Named(r.Context(), venueID)
		if err != nil {
			return l, err
		}
		name, city = cmp.Or(name, n), cmp.Or(city, c)
	}
	return venue.FromCSV(bytes.NewReader(body), name, city)
}
func (s *Handlers) createEvent(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	var body struct {
		organizer.EventSpec
		WaitingRoom *roomSettings `json:"waiting_room"`
		// Read as sent, as PATCH reads them: left out is the default, a
		// 0 sent is out of bounds.
		MaxPerAccount *int `json:"max_per_account"`
		MaxPerHold    *int `json:"max_per_hold"`
		HoldTTL       *int `json:"hold_ttl_seconds"`
	}
	if err := web.Decode(r, &body); err != nil {
		return err
	}
	if err := organizer.SentLimits(body.MaxPerAccount, body.MaxPerHold, body.HoldTTL); err != nil {
		return err
	}
	spec := body.EventSpec
	for to, from := range map[*int]*int{&spec.MaxPerAccount: body.MaxPerAccount, &spec.MaxPerHold: body.MaxPerHold, &spec.HoldTTL: body.HoldTTL} {
		if from != nil {
			*to = *from // left out, 0 asks for the default
		}
	}
	if body.WaitingRoom != nil {
		if spec.WaitingRoom, err = body.WaitingRoom.settings("/waiting_room"); err != nil {
			return err
		}
	}
	e, err := s.Organizer.CreateEvent(r.Context(), sess.Account, spec)
	if errors.Is(err, venue.ErrNotFound) {
		// Another organizer's venue too, as if it did not exist.
		return problem.New(http.StatusNotFound, "layout-not-found", fmt.Sprintf(
			"You have no venue %d with a layout version %d. GET /api/venues lists your venues and their versions.", spec.VenueID, spec.LayoutVersion))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/events/"+web.Itoa(e.ID))
	writeEvent(w, http.StatusCreated, e)
	return nil
}

// statusChange is PUT /api/events/{id}/status's body.
type statusChange struct {
	Status string `json:"status"`
}

// changeEventStatus is PUT /api/events/{id}/status's change.
func (s *Handlers) changeEventStatus(ctx context.Context, organizerID, eventID int64, ifMatch organizer.IfMatch, body statusChange) (event.Event, error) {
	e, err := s.Organizer.ChangeStatus(ctx, organizerID, eventID, ifMatch, body.Status)
	if err != nil {
		return e, err
	}
	if e.Status == event.Cancelled {
		// Again on every call: the refunds that failed are asked again
		// (GET /api/events/{id}/refunds shows them).
		if _, err := s.Orders.RefundEvent(ctx, e); err != nil {
			return event.Event{}, err
		}
	}
	return e, nil
}

// roomSettings are waiting-room settings as a request sends them. They
// replace the event's as a whole, so "enabled" is required: left out, it
// would read as false and {"ceiling": 50} would turn the room off.
//
// The ceiling and times are read as sent too: a left-out one takes the
// default, which 0 stands for inside, but a 0 that was sent is out of
// bounds (a ceiling of 0 meant to let nobody in must not become 1,000).
type roomSettings struct {
	event.WaitingRoom
	Enabled      *bool `json:"enabled"`
	Ceiling      *int  `json:"ceiling"`
	ActiveTTL    *int  `json:"active_ttl_seconds"`
	AdmissionTTL *int  `json:"admission_ttl_seconds"`
}

// settings returns the settings, or a refusal pointing at pointer.
func (b roomSettings) settings(pointer string) (event.WaitingRoom, error) {
	if b.Enabled == nil {
		return event.WaitingRoom{}, web.Refused(reject.New(organizer.ErrInvalidEvent, pointer+"/enabled",
			`Say whether the waiting room is on: "enabled": true or false (the settings are replaced as a whole).`), http.StatusBadRequest, "invalid-event")
	}
	w := b.WaitingRoom
	w.Enabled = *b.Enabled
	for _, f := range []struct {
		member string
		sent   *int
		dst    *int
	}{{"/ceiling", b.Ceiling, &w.Ceiling}, {"/active_ttl_seconds", b.ActiveTTL, &w.ActiveTTL}, {"/admission_ttl_seconds", b.AdmissionTTL, &w.AdmissionTTL}} {
		if f.sent == nil {
			continue
		}
		if *f.sent == 0 {
			return event.WaitingRoom{}, web.Refused(organizer.RoomRefusal(pointer+f.member), http.StatusBadRequest, "invalid-event")
		}
		*f.dst = *f.sent
	}
	return w, nil
}

// eventPatch is PATCH /api/events/{id}'s body: its waiting room is
// checked as roomSettings.
type eventPatch struct {
	organizer.EventPatch
	WaitingRoom *roomSettings `json:"waiting_room"`
}

// CheckMembers refuses null, which would read as left out (keep the value).
func (*eventPatch) CheckMembers(sent web.Members) error {
	if name, ok := sent.Null(); ok {
		return problem.New(http.StatusBadRequest, "invalid-field", fmt.Sprintf("Field %q cannot be null: leave it out to keep its value.", name))
	}
	return nil
}

func (s *Handlers) updateEvent(ctx context.Context, organizerID, eventID int64, ifMatch organizer.IfMatch, body eventPatch) (event.Event, error) {
	p := body.EventPatch
	if body.WaitingRoom != nil {
		w, err := body.WaitingRoom.settings("/waiting_room")
		if err != nil {
			return event.Event{}, err
		}
		p.WaitingRoom = &w
	}
	return s.Organizer.UpdateEvent(ctx, organizerID, eventID, ifMatch, p)
}

// setWaitingRoom is PUT /api/events/{id}/waiting-room's change.
func (s *Handlers) setWaitingRoom(ctx context.Context, organizerID, eventID int64, ifMatch organizer.IfMatch, body roomSettings) (event.Event, error) {
	w, err := body.settings("")
	if err != nil {
		return event.Event{}, err
	}
	return s.Organizer.SetWaitingRoom(ctx, organizerID, eventID, ifMatch, w)
}

// eventChange serves an organizer's change to one of their events: it
// decodes the body, applies it if the event is still at the version of
// If-Match (when sent) and answers the event with its new ETag (PUT
// status, price-levels and waiting-room, PATCH /api/events/{id}).
func eventChange[B any](s *Handlers, apply func(ctx context.Context, organizerID, eventID int64, ifMatch organizer.IfMatch, body B) (event.Event, error)) web.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		sess, id, err := s.organizerAndID(r)
		if err != nil {
			return err
		}
		versions, err := ifMatch(r)
		if err != nil {
			return err
		}
		var body B
		if err := web.Decode(r, &body); err != nil {
			return err
		}
		e, err := apply(r.Context(), sess.Account, id, versions, body)
		if err != nil {
			return err
		}
		writeEvent(w, http.StatusOK, e)
		return nil
	}
}

// ifMatch reads If-Match (RFC 9110, 13.1.1) as the event versions a write
// may apply to. It is optional: without it (or with "*") a write applies to
// the event as it is, and only the fields it sends change, which keeps
// scripts simple; the console sends it on every settings change, so an
// edit based on a stale read is refused (412) instead of overwriting what
// changed meanwhile. A weak tag never matches (strong comparison).
func ifMatch(r *http.Request) (organizer.IfMatch, error) {
	h := strings.TrimSpace(strings.Join(r.Header.Values("If-Match"), ","))
	if h == "" || h == "*" {
		return nil, nil
	}
	versions := organizer.IfMatch{}
	for _, tag := range strings.Split(h, ",") {
		tag = strings.TrimSpace(tag)
		weak := strings.HasPrefix(tag, "W/")
		tag = strings.TrimPrefix(tag, "W/")
		if len(tag) < 2 || tag[0] != '"' || tag[len(tag)-1] != '"' {
			return nil, problem.New(http.StatusBadRequest, "invalid-if-match",
				`If-Match takes the ETag that reading the event answered, quotes included, like If-Match: "7".`)
		}
		if v, err := strconv.ParseInt(tag[1:len(tag)-1], 10, 64); err == nil && !weak {
			versions = append(versions, v)
		}
	}
	return versions, nil
}

// writeEvent answers an event with its version as ETag, for the If-Match
// of the next change.
func writeEvent(w http.ResponseWriter, status int, e event.Event) {
	w.Header().Set("ETag", e.ETag())
	web.WriteJSON(w, status, e)
}

// OrganizerError maps organizer and venue sentinels to problems.
func OrganizerError(err error) error {
	var lines *venue.CSVError
	switch {
	case errors.As(err, &lines):
		return problem.New(http.StatusBadRequest, "invalid-layout", lines.Detail()).With("errors", lines.Lines)
	case errors.Is(err, venue.ErrInvalidLayout):
		return web.Refused(err, http.StatusBadRequest, "invalid-layout")
	case errors.Is(err, organizer.ErrInvalidEvent):
		return web.Refused(err, http.StatusBadRequest, "invalid-event")
	case errors.Is(err, organizer.ErrStale):
		return web.Refused(err, http.StatusPreconditionFailed, "event-changed")
	case errors.Is(err, venue.ErrNotFound):
		return problem.New(http.StatusNotFound, "layout-not-found", "No such venue layout.")
	case errors.Is(err, organizer.ErrShardTaken):
		return problem.New(http.StatusForbidden, "shard-taken",
			"That shard serves another organizer's events. Leave shard out to let placement choose.")
	}
	return nil
}

// listVenues serves GET /api/venues: the caller's venues and versions.
func (s *Handlers) listVenues(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	venues, err := s.Venues.Owned(r.Context(), sess.Account, 0)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"venues": venues})
	return nil
}

// listLayouts serves GET /api/venues/{id}/layouts: one venue of the
// caller's with its versions; another organizer's venue is not found.
func (s *Handlers) listLayouts(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return err
	}
	venues, err := s.Venues.Owned(r.Context(), sess.Account, id)
	if err != nil {
		return err
	}
	if len(venues) == 0 {
		return problem.New(http.StatusNotFound, "venue-not-found", "You have no venue "+web.Itoa(id)+".")
	}
	web.WriteJSON(w, http.StatusOK, venues[0])
	return nil
}

// organizerEvents serves GET /api/organizer/events: every event the caller
// created, drafts and cancelled ones included.
func (s *Handlers) organizerEvents(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	events, err := s.Events.ByCreator(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"events": events})
	return nil
}

// organizerEvent serves GET /api/organizer/events/{id}: an event of the
// caller's, drafts included.
func (s *Handlers) organizerEvent(w http.ResponseWriter, r *http.Request) error {
	_, e, err := s.ownEvent(r)
	if err != nil {
		return err
	}
	writeEvent(w, http.StatusOK, e)
	return nil
}

// FailedRefund is a failed refund with the buyer to contact.
type FailedRefund struct {
	order.FailedRefund
	Buyer organizer.Buyer `json:"buyer"`
}

// buyersOf reads the buyers of items (user names each one's).
func buyersOf[T any](s *Handlers, r *http.Request, items []T, user func(T) int64) (map[int64]organizer.Buyer, error) {
	ids := make([]int64, len(items))
	for i, it := range items {
		ids[i] = user(it)
	}
	return s.Organizer.Buyers(r.Context(), ids)
}

// RefundFailure is an order whose refund failed, with the buyer to
// contact and the event's name.
type RefundFailure struct {
	order.RefundFailure
	EventName string          `json:"event_name"`
	Buyer     organizer.Buyer `json:"buyer"`
}

// refundFailures serves GET /api/organizer/refund-failures: the orders of
// the caller's events whose refund the PSP refused or never answered,
// their money still owed, newest first (POST /api/orders/{id}/refund asks
// again).
func (s *Handlers) refundFailures(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	mine, err := s.Organizer.EventIDs(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	found, err := s.Orders.RefundFailures(r.Context(), mine)
	if err != nil {
		return err
	}
	buyers, err := buyersOf(s, r, found, func(f order.RefundFailure) int64 { return f.UserID })
	if err != nil {
		return err
	}
	view := make([]RefundFailure, len(found))
	for i, f := range found {
		e, err := s.EventCache.Get(r.Context(), f.EventID)
		if err != nil {
			return err
		}
		view[i] = RefundFailure{RefundFailure: f, EventName: e.Name, Buyer: buyers[f.UserID]}
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"failures": view})
	return nil
}

// eventRefunds serves GET /api/events/{id}/refunds: how far the refunds of
// a cancelled event are, and which failed and why.
func (s *Handlers) eventRefunds(w http.ResponseWriter, r *http.Request) error {
	_, e, err := s.ownEvent(r)
	if err != nil {
		return err
	}
	p, err := s.Orders.Refunds(r.Context(), e)
	if err != nil {
		return err
	}
	buyers, err := buyersOf(s, r, p.Failures, func(f order.FailedRefund) int64 { return f.UserID })
	if err != nil {
		return err
	}
	view := struct {
		order.RefundProgress
		Failures []FailedRefund `json:"failures,omitempty"`
	}{RefundProgress: p}
	for _, f := range p.Failures {
		view.Failures = append(view.Failures, FailedRefund{FailedRefund: f, Buyer: buyers[f.UserID]})
	}
	web.WriteJSON(w, http.StatusOK, view)
	return nil
}
