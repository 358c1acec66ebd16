package console

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
)

// ownEvent returns the event of the path if the caller organizes it.
func (s *Handlers) ownEvent(r *http.Request) (token.Claims, event.Event, error) {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return sess, event.Event{}, err
	}
	e, err := s.Organizer.Event(r.Context(), sess.Account, id)
	return sess, e, err
}

// controlRoom serves GET /api/events/{id}/control-room: built at most
// about once a second across the fleet (the page polls every second).
func (s *Handlers) controlRoom(w http.ResponseWriter, r *http.Request) error {
	_, e, err := s.ownEvent(r)
	if err != nil {
		return err
	}
	// Keyed by the event's version as well: after a control's write the
	// next poll shows it (and its ETag) instead of the figures of a moment
	// before.
	body, err := s.ReadCache.Get(r.Context(), "control-room:"+web.Itoa(e.ID)+":"+strconv.FormatInt(e.Version, 10), time.Second, func(ctx context.Context) ([]byte, error) {
		v, err := s.Control.Build(ctx, e)
		if err != nil {
			return nil, err
		}
		return json.Marshal(v)
	})
	if errors.Is(err, queue.ErrUnavailable) {
		p := problem.New(http.StatusServiceUnavailable, "control-room-unavailable",
			"The live figures are out of reach for a moment (the waiting room's store did not answer); the page retries by itself.").Wrap(err)
		p.RetryAfter = 1
		return p
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "private, max-age=1")
	w.Write(body)
	return nil
}

// setAdmission serves PUT /api/events/{id}/admission: pause or resume
// admission and set the ceiling; the admission controller applies it at
// its next tick (it re-reads events every second). Each field is
// optional: a pause sends only "paused" and cannot overwrite a ceiling set
// meanwhile. If-Match (the control room's event_etag) guards only the
// fields sent: refused (412) if one of them changed after that version,
// whatever else changed.
func (s *Handlers) setAdmission(ctx context.Context, organizerID, eventID int64, ifMatch organizer.IfMatch, body organizer.Admission) (event.Event, error) {
	if body.Paused == nil && body.Ceiling == nil {
		return event.Event{}, problem.New(http.StatusBadRequest, "invalid-admission",
			`Send "paused" (true or false), "ceiling" (the most active shoppers) or both; what you leave out keeps its value.`)
	}
	return s.Organizer.SetAdmission(ctx, organizerID, eventID, ifMatch, body)
}

// OrderHit is one search result.
type OrderHit struct {
	order.Order
	EventName string          `json:"event_name"`
	Buyer     organizer.Buyer `json:"buyer"`
}

// searchOrders serves GET /api/organizer/orders?q=: an email address, an
// order number or a ticket number, within the caller's events. A ticket
// code is refused there: a URL stays in CloudFront's access logs and the
// browser's history, and a printed code never expires.
func (s *Handlers) searchOrders(w http.ResponseWriter, r *http.Request) error {
	return s.answerSearch(w, r, func() (string, error) { return r.URL.Query().Get("q"), nil }, false)
}

// searchOrdersByBody serves POST /api/organizer/orders {"q": …}:
// what GET finds, and ticket codes too.
func (s *Handlers) searchOrdersByBody(w http.ResponseWriter, r *http.Request) error {
	return s.answerSearch(w, r, func() (string, error) {
		var body struct {
			Q string `json:"q"`
		}
		err := web.Decode(r, &body)
		return body.Q, err
	}, true)
}

// answerSearch answers the orders of the caller's events that the query
// names; codes tells whether it may be a ticket code.
func (s *Handlers) answerSearch(w http.ResponseWriter, r *http.Request, query func() (string, error), codes bool) error {
	sess, err := s.organizerSession(r)
	if err != nil {
		return err
	}
	q, err := query()
	if err != nil {
		return err
	}
	q = strings.TrimSpace(q)
	if q == "" || len(q) > 254 {
		return problem.New(http.StatusBadRequest, "invalid-query", "Search by an email address, an order number, a ticket number or a ticket code.")
	}
	mine, err := s.Organizer.EventIDs(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	found, err := s.findOrders(r, q, mine, codes)
	if err != nil {
		return err
	}
	found = slices.DeleteFunc(found, func(o order.Order) bool { return !slices.Contains(mine, o.EventID) })
	hits, err := s.describe(r, found)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"orders": hits})
	return nil
}

// codeInURL refuses a ticket code in a query string.
func codeInURL() error {
	return problem.New(http.StatusBadRequest, "ticket-code-in-url", "Ticket codes are not searched from a URL: it would stay in access logs and the browser's history, and a printed code never expires. "+
		"Send the code in the body of POST /api/organizer/orders (the console's search box does), or search by the ticket number.")
}

// findOrders reads what q names, anywhere; the caller scopes it. Unless
// codes, a ticket code is refused before anything is read.
func (s *Handlers) findOrders(r *http.Request, q string, events []int64, codes bool) ([]order.Order, error) {
	ctx := r.Context()
	one := func(o order.Order, err error) ([]order.Order, error) {
		if errors.Is(err, order.ErrNotFound) {
			return nil, nil
		}
		return []order.Order{o}, err
	}
	if strings.Contains(q, "@") {
		id, found, err := s.Organizer.AccountByEmail(ctx, q)
		if err != nil || !found {
			return nil, err
		}
		return s.Orders.OfBuyer(ctx, id, events)
	}
	code, err := entry.Parse(q)
	// An issue-time ticket code: <order>-<item>-<n>-<mac>.
	parts := strings.Split(q, "-")
	switch {
	case (err == nil || len(parts) == 4) && !codes:
		return nil, codeInURL()
	case err == nil:
		return one(s.Orders.OfTicket(ctx, code.Ticket))
	case len(parts) == 4:
		q = parts[0]
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(q, "#"), 10, 64)
	if err != nil || n <= 0 {
		return nil, problem.New(http.StatusBadRequest, "invalid-query",
			"Search by an email address, an order number, a ticket number or a ticket code (as printed on the ticket).")
	}
	if found, err := one(s.Orders.Lookup(ctx, n)); err != nil || len(found) > 0 {
		return found, err
	}
	return one(s.Orders.OfTicket(ctx, n))
}

// describe adds event names and buyers to orders, newest first.
func (s *Handlers) describe(r *http.Request, found []order.Order) ([]OrderHit, error) {
	slices.SortFunc(found, func(a, b order.Order) int { return b.CreatedAt.Compare(a.CreatedAt) })
	ids := make([]int64, len(found))
	for i, o := range found {
		ids[i] = o.UserID
	}
	buyers, err := s.Organizer.Buyers(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	hits := make([]OrderHit, len(found))
	for i, o := range found {
		e, err := s.EventCache.Get(r.Context(), o.EventID)
		if err != nil {
			return nil, err
		}
		hits[i] = OrderHit{Order: o, EventName: e.Name, Buyer: buyers[o.UserID]}
	}
	return hits, nil
}

// ownOrder returns an order of one of the caller's events.
func (s *Handlers) ownOrder(r *http.Request) (token.Claims, order.Detail, error) {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return sess, order.Detail{}, err
	}
	d, err := s.Orders.Detail(r.Context(), id)
	if err != nil {
		return sess, d, err
	}
	if _, err := s.Organizer.Event(r.Context(), sess.Account, d.EventID); errors.Is(err, event.ErrNotFound) {
		return sess, d, order.ErrNotFound
	} else if err != nil {
		return sess, d, err
	}
	return sess, d, nil
}

// OrderDetail is an order as the console shows it.
type OrderDetail struct {
	order.Detail
	EventName string          `json:"event_name"`
	Buyer     organizer.Buyer `json:"buyer"`
}

// writeDetail answers an order's whole history with its event's name and
// its buyer.
func (s *Handlers) writeDetail(w http.ResponseWriter, r *http.Request, d order.Detail) error {
	hits, err := s.describe(r, []order.Order{d.Order})
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, OrderDetail{Detail: d, EventName: hits[0].EventName, Buyer: hits[0].Buyer})
	return nil
}

// organizerOrder serves GET /api/organizer/orders/{id}: the order with
// every payment attempt, refund and ticket.
func (s *Handlers) organizerOrder(w http.ResponseWriter, r *http.Request) error {
	_, d, err := s.ownOrder(r)
	if err != nil {
		return err
	}
	return s.writeDetail(w, r, d)
}

// refundOrder serves POST /api/orders/{id}/refund: the whole order, once
// (a second call answers the refunded order), or some of its tickets
// (refund.go).
func (s *Handlers) refundOrder(w http.ResponseWriter, r *http.Request) error {
	sess, d, err := s.ownOrder(r)
	if err != nil {
		return err
	}
	ask, err := refundAsk(r, sess.Account)
	if err != nil {
		return err
	}
	if _, err := s.Orders.RefundTickets(r.Context(), d.ID, ask); err != nil {
		return refundError(err)
	}
	if d, err = s.Orders.Detail(r.Context(), d.ID); err != nil {
		return err
	}
	return s.writeDetail(w, r, d)
}

// refundError is the problem of a refund refused or failed (a void's too).
func refundError(err error) error {
	if p := partialRefundError(err); p != nil {
		return p
	}
	switch {
	case errors.Is(err, order.ErrNotRefundable):
		return web.Refused(err, http.StatusConflict, "order-not-refundable")
	case errors.Is(err, order.ErrRefundRefused):
		return problem.New(http.StatusConflict, "refund-refused",
			"The payment provider refused this refund; the order stays as it was and is listed among the refund failures. Its reason is in the order's refunds: fix it, then ask again (a new refund attempt).").Wrap(err)
	}
	if busy := (*order.ErrPSPBusy)(nil); errors.As(err, &busy) {
		if busy.Unknown {
			return problem.New(http.StatusServiceUnavailable, "psp-unavailable",
				"The payment provider's quota cannot be read just now; nothing was asked. Ask again in a few seconds.").Wrap(err).RetryIn(busy.Wait)
		}
		return problem.New(http.StatusTooManyRequests, "psp-busy",
			"The payment provider's quota is spent for the moment; nothing was asked. Ask again after Retry-After.").Wrap(err).RetryIn(busy.Wait)
	}
	switch {
	case errors.Is(err, psp.ErrUnavailable), errors.Is(err, psp.ErrRateLimited):
		p := problem.New(http.StatusServiceUnavailable, "psp-unavailable",
			"The payment provider did not answer; the order stays as it was and is listed among the refund failures. Ask again in a few seconds: the same refund is asked, never a second one.")
		p.RetryAfter = 5
		return p.Wrap(err)
	}
	return err
}
