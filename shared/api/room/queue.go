package room

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
)

// Polling the designed way: the shared progress (edge-cached) every couple
// of seconds, the per-fan status (origin, also the heartbeat) every 2.5 min.
const (
	progressPoll = 2 * time.Second
	heartbeat    = 150 * time.Second
	ticketTTL    = 24 * time.Hour
)

func queueTicketCookie(eventID int64) string { return "catraca_queue_" + web.Itoa(eventID) }

type queueView struct {
	State    queue.State `json:"state"`
	Position int64       `json:"position,omitempty"`
	// Ahead is sent with a position only: before the draw nobody is ahead.
	Ahead      *int64     `json:"ahead,omitempty"`
	ETASeconds int64      `json:"eta_seconds,omitempty"`
	DrawAt     *time.Time `json:"draw_at,omitempty"`
	OpensAt    *time.Time `json:"opens_at,omitempty"`
	Message    string     `json:"message"`
	// Admission is the token to buy with, once admitted (also a cookie).
	Admission        string     `json:"admission_token,omitempty"`
	AdmissionExpires *time.Time `json:"admission_expires_at,omitempty"`
	// Ticket proves the place if the queue store fails over.
	Ticket string `json:"queue_ticket,omitempty"`
	Poll   poll   `json:"poll"`
}

type poll struct {
	ProgressURL string `json:"progress_url"`
	ProgressMs  int64  `json:"progress_every_ms"`
	StatusURL   string `json:"status_url"`
	StatusMs    int64  `json:"status_every_ms"`
}

// appendJSON appends v as encoding/json would write it, without
// reflection: joins and status calls are the requests millions of fans
// send (TestQueueViewJSON holds the two to the same bytes).
func (v *queueView) appendJSON(b []byte) []byte {
	b = web.AppendJSONString(append(b, `{"state":`...), string(v.State))
	if v.Position != 0 {
		b = strconv.AppendInt(append(b, `,"position":`...), v.Position, 10)
	}
	if v.Ahead != nil {
		b = strconv.AppendInt(append(b, `,"ahead":`...), *v.Ahead, 10)
	}
	if v.ETASeconds != 0 {
		b = strconv.AppendInt(append(b, `,"eta_seconds":`...), v.ETASeconds, 10)
	}
	b = web.AppendJSONTime(b, `,"draw_at":`, v.DrawAt)
	b = web.AppendJSONTime(b, `,"opens_at":`, v.OpensAt)
	b = web.AppendJSONString(append(b, `,"message":`...), v.Message)
	if v.Admission != "" {
		b = web.AppendJSONString(append(b, `,"admission_token":`...), v.Admission)
	}
	b = web.AppendJSONTime(b, `,"admission_expires_at":`, v.AdmissionExpires)
	if v.Ticket != "" {
		b = web.AppendJSONString(append(b, `,"queue_ticket":`...), v.Ticket)
	}
	b = web.AppendJSONString(append(b, `,"poll":{"progress_url":`...), v.Poll.ProgressURL)
	b = strconv.AppendInt(append(b, `,"progress_every_ms":`...), v.Poll.ProgressMs, 10)
	b = web.AppendJSONString(append(b, `,"status_url":`...), v.Poll.StatusURL)
	b = strconv.AppendInt(append(b, `,"status_every_ms":`...), v.Poll.StatusMs, 10)
	return append(b, "}}\n"...)
}

// roomPaths are the paths of one event's waiting room, cut from one string
// (one allocation: joins and status calls name them on every answer).
type roomPaths struct {
	event    string // /api/events/{id}, the queue ticket cookie's path
	status   string // /api/events/{id}/queue
	progress string // /api/events/{id}/queue/progress
}

func pathsOf(eventID int64) roomPaths {
	const queue, progress = "/queue", "/progress"
	var b [64]byte
	p := string(append(strconv.AppendInt(append(b[:0], "/api/events/"...), eventID, 10), queue+progress...))
	n := len(p) - len(queue+progress)
	return roomPaths{event: p[:n], status: p[:n+len(queue)], progress: p}
}

func pollHints(paths roomPaths, state queue.State) poll {
	p := poll{ProgressURL: paths.progress, ProgressMs: progressPoll.Milliseconds(), StatusURL: paths.status,
		StatusMs: (heartbeat + time.Duration(rand.IntN(10_000))*time.Millisecond).Milliseconds()}
	if state == queue.StatePrequeue {
		p.ProgressMs = 5000
	}
	return p
}

// restorePlace reads a valid queue ticket for this event and account.
func (s *Handlers) restorePlace(r *http.Request, eventID, account int64) int64 {
	c, err := r.Cookie(queueTicketCookie(eventID))
	raw := r.Header.Get("X-Queue-Ticket")
	if err == nil {
		raw = c.Value
	}
	if raw == "" {
		return 0
	}
	claims, err := s.Tickets.Verify(raw)
	if err != nil || claims.Event != eventID || claims.Account != account {
		return 0
	}
	return claims.Place
}

func (s *Handlers) issueTicket(w http.ResponseWriter, r *http.Request, v *queueView, eventID, account, place int64, paths roomPaths) error {
	raw, exp, err := s.Tickets.Issue(token.Claims{Account: account, Event: eventID, Place: place}, ticketTTL)
	if err != nil {
		return err
	}
	v.Ticket = raw
	web.SetTokenCookie(w, r, queueTicketCookie(eventID), raw, paths.event, exp)
	return nil
}

// issueAdmission mints the stateless admission token once the controller
// has admitted the fan, and sets it as a cookie for the browser.
// The token belongs to one turn and expires with it.
func (s *Handlers) issueAdmission(w http.ResponseWriter, r *http.Request, v *queueView, eventID, account int64, until time.Time, turn int64) error {
	ttl := time.Until(until)
	if ttl <= 0 {
		return nil
	}
	raw, exp, err := s.Admissions.Issue(token.Claims{Account: account, Event: eventID, Turn: turn}, ttl)
	if err != nil {
		return err
	}
	v.Admission, v.AdmissionExpires = raw, &exp
	web.SetTokenCookie(w, r, AdmissionCookie(eventID), raw, "/", exp)
	s.pruneAdmissions(w, r, eventID, account)
	return nil
}

// maxAdmissions bounds the admission cookies a browser keeps: each rides
// on every request (Path=/), ~280 bytes.
const maxAdmissions = 5

// pruneAdmissions expires, beside a new admission for eventID, the
// admission cookies not worth sending: the old single catraca_admission,
// any that is not this account's valid token for the event its name says,
// and past maxAdmissions, those whose turns end first.
func (s *Handlers) pruneAdmissions(w http.ResponseWriter, r *http.Request, eventID, account int64) {
	type live struct {
		name string
		exp  time.Time
	}
	var kept []live
	for _, c := range r.Cookies() {
		if !strings.HasPrefix(c.Name, admissionCookies) || c.Name == AdmissionCookie(eventID) {
			continue
		}
		id, err := strconv.ParseInt(strings.TrimPrefix(c.Name, admissionCookies+"_"), 10, 64)
		if claims, verr := s.Admissions.Verify(c.Value); err == nil && verr == nil && c.Name == AdmissionCookie(id) &&
			claims.Event == id && claims.Account == account {
			kept = append(kept, live{c.Name, claims.Expires})
			continue
		}
		web.ExpireCookie(w, r, c.Name, "/")
	}
	if len(kept) < maxAdmissions {
		return
	}
	slices.SortFunc(kept, func(a, b live) int { return b.exp.Compare(a.exp) })
	for _, c := range kept[maxAdmissions-1:] {
		web.ExpireCookie(w, r, c.name, "/")
	}
}

// queueUnavailable is the calm fail-closed answer.
func queueUnavailable(err error) error {
	p := problem.New(http.StatusServiceUnavailable, "waiting-room-unavailable",
		"The waiting room is catching its breath. Your place is kept; this page retries by itself.").
		With("place_kept", true).Wrap(err)
	p.RetryAfter = 5
	return p
}

// joinQueue serves POST /api/events/{id}/queue in one Redis round trip:
// the session is checked on its signature alone (see signedSession), and
// the join script also spends from the account's bucket.
func (s *Handlers) joinQueue(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SignedSessionAndID(r)
	if err != nil {
		return err
	}
	restore := s.restorePlace(r, id, sess.Account)
	if err := s.Door.pass(r, sess, id, restore); err != nil {
		return err
	}
	place, err := s.Room.Join(r.Context(), id, sess.Account, restore)
	if err != nil {
		return queueError(err)
	}
	paths := pathsOf(id)
	v := queueView{State: place.State, Poll: pollHints(paths, place.State)}
	switch place.State {
	case queue.StateClosed:
		return s.joinUnpublished(w, r, &v, id)
	case queue.StateNotYet:
		return queueNotOpen(place.At)
	case queue.StatePresale:
		return presaleOnly(id, place.At)
	case queue.StateSoldOut:
		return problem.New(http.StatusConflict, "sold-out", "This event is sold out.")
	case queue.StatePrequeue:
		v.DrawAt = &place.At
		v.Message = "You are in. At " + place.At.Format(time.RFC3339) + " everyone here gets a random place in line; arriving earlier gives no advantage."
	case queue.StateWaiting:
		v.Position, v.Ahead = place.Position, &place.Ahead
		v.Message = "You are in line. Keep this page open; it updates by itself."
	case queue.StateAdmitted:
		v.Message = "It is your turn."
		if err := s.issueAdmission(w, r, &v, id, sess.Account, place.At, place.Turn); err != nil {
			return err
		}
	}
	if err := s.issueTicket(w, r, &v, id, sess.Account, place.Number, paths); err != nil {
		return err
	}
	v.write(w)
	return nil
}

// joinUnpublished answers a join the script found no room for.
func (s *Handlers) joinUnpublished(w http.ResponseWriter, r *http.Request, v *queueView, id int64) error {
	// Redis has no room until the controller's first tick publishes it;
	// "buy directly" then would meet the edge's gate.
	e, err := web.PublicEvent(r.Context(), s.EventCache, id)
	if errors.Is(err, event.ErrNotFound) {
		return err
	}
	if err != nil || !e.WaitingRoom.Enabled {
		return problem.New(http.StatusConflict, "no-waiting-room", "This event has no open waiting room: buy directly if sales are open.")
	}
	if err := unpublishedRoom(e, time.Now()); err != nil {
		return err
	}
	// Opening: a state to wait in, not an error, or every on-sale
	// without a pre-queue would open with a 5xx. The next tick publishes
	// the room and nobody has a place before it, so a fan told to ask
	// again in a second loses about that second, as with the 503 before.
	v.Message = "The waiting room is opening. This page joins the line by itself in a moment; nobody has been let in yet."
	v.State = queue.StateOpening
	w.Header().Set("Retry-After", "1")
	v.write(w)
	return nil
}

// unpublishedRoom refuses a join of an event whose room Redis does not
// have, unless the room is opening (nil). The controller publishes a room
// only while its event sells or is about to open its line, so the room is
// opening only if its line should be open by now; otherwise the fan is
// told when it opens, or that sales are over, instead of being asked to
// retry every second for good.
func unpublishedRoom(e event.Event, now time.Time) error {
	opens := queue.SettingsOf(e, 0).OpensAt
	switch {
	case e.Status == event.Closed || e.Status == event.Cancelled || !now.Before(e.SaleEndsAt):
		return problem.New(http.StatusForbidden, "sales-closed", "Sales for this event are closed, so its waiting room is not open.")
	case now.Before(opens):
		return queueNotOpen(opens.UTC())
	}
	return nil
}

// queueNotOpen refuses a join before the room's line opens at at.
func queueNotOpen(at time.Time) error {
	return problem.New(http.StatusConflict, "queue-not-open", "The waiting room opens at "+at.Format(time.RFC3339)+".").With("opens_at", at)
}

// answers recycles the buffers join and status answers are written in (a
// ResponseWriter keeps nothing of what it is given).
var answers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// write sends v as the 200 answer.
func (v *queueView) write(w http.ResponseWriter) {
	b := answers.Get().(*[]byte)
	*b = v.appendJSON((*b)[:0])
	web.WriteJSONBytes(w, http.StatusOK, *b)
	answers.Put(b)
}

// queueStatus serves GET /api/events/{id}/queue: the fan's own state and
// heartbeat, and the admission token once admitted. Like a join it costs
// one Redis round trip, rate limit and ETA included.
func (s *Handlers) queueStatus(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SignedSessionAndID(r)
	if err != nil {
		return err
	}
	st, err := s.Room.Status(r.Context(), id, sess.Account, s.restorePlace(r, id, sess.Account))
	if err != nil {
		return queueError(err)
	}
	v := queueView{State: st.State, Position: st.Position, ETASeconds: int64(st.ETA.Seconds()), Poll: pollHints(pathsOf(id), st.State)}
	if st.Position > 0 {
		v.Ahead = &st.Ahead
	}
	switch st.State {
	case queue.StateWaiting:
		v.Message = "You are in line. No need to refresh: this page updates by itself."
	case queue.StatePrequeue:
		v.Message = "You are in. Places are drawn at random when the sale starts."
	case queue.StateAdmitted:
		v.Message = "It is your turn: pick your seats before your access expires."
		if err := s.issueAdmission(w, r, &v, id, sess.Account, st.AdmitTill, st.Turn); err != nil {
			return err
		}
	case queue.StateExpired:
		v.Message = "Your turn came and went. Join again to get a new place."
	case queue.StateSoldOut:
		v.Message = "Sorry, this event is sold out."
	case queue.StateNone:
		v.Message = "You are not in this waiting room. Join to get a place."
	case queue.StateClosed:
		if err := s.eventExists(r.Context(), id); err != nil {
			return err
		}
		v.Message = "This event has no open waiting room."
	}
	v.write(w)
	return nil
}

// leaveQueue serves DELETE /api/events/{id}/queue: a fan who is done (or
// gives up) hands the shopping slot to the next fan now instead of when the
// session times out. Leaving twice is fine.
func (s *Handlers) leaveQueue(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	// Like every other route of an event fans cannot see (a draft, or
	// none): a 404, not a 204 that tells the event exists.
	if err := s.eventExists(r.Context(), id); err != nil {
		return err
	}
	if err := s.Room.Leave(r.Context(), id, sess.Account); err != nil {
		return queueError(err)
	}
	// The queue ticket would put the fan back in line at the next status;
	// the turn's admission buys nothing any more.
	web.ExpireCookie(w, r, queueTicketCookie(id), pathsOf(id).event)
	web.ExpireCookie(w, r, AdmissionCookie(id), "/")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// queueProgress serves GET /api/events/{id}/queue/progress: the shared
// counters, the same for every fan, cached by CloudFront for a second.
func (s *Handlers) queueProgress(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r, "id")
	if err != nil {
		return err
	}
	p, err := s.Room.Progress(r.Context(), id)
	if err != nil {
		return queueError(err)
	}
	if p.Phase == "" && p.DrawAt.UnixMilli() == 0 { // no room was ever published
		if err := s.eventExists(r.Context(), id); err != nil {
			return err
		}
	}
	// No stale-while-revalidate: fans near the front judge from served when
	// to pick up their turn, and a stale count costs shopping-slot time.
	w.Header().Set("Cache-Control", "public, max-age=1")
	web.WriteJSON(w, http.StatusOK, struct {
		queue.Progress
		Now time.Time `json:"now"`
	}{p, time.Now().UTC()})
	return nil
}

// eventExists is event-not-found when id names no event fans can see. The
// queue's answers come from Redis alone; only the rare ones of a room that
// is closed or was never published ask the catalog (its in-process cache)
// whether the event exists at all.
func (s *Handlers) eventExists(ctx context.Context, id int64) error {
	if _, err := web.PublicEvent(ctx, s.EventCache, id); errors.Is(err, event.ErrNotFound) {
		return err
	}
	return nil
}

// queueError maps the room's errors: an outage fails closed, an account
// calling too often waits (the IP is not used: carriers put many fans
// behind one address).
func queueError(err error) error {
	var slow queue.SlowDown
	switch {
	case errors.Is(err, queue.ErrUnavailable):
		return queueUnavailable(err)
	case errors.As(err, &slow):
		return problem.New(http.StatusTooManyRequests, "slow-down",
			"Too many requests. There is no need to refresh: your place is kept and the page updates itself.").RetryIn(slow.Wait)
	}
	return err
}
