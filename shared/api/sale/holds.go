package sale

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/queue"
)

// createHold serves POST /api/events/{id}/holds.
func (s *Handlers) createHold(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.UnflaggedSessionAndID(r)
	if err != nil {
		return err
	}
	key := r.Header.Get("Idempotency-Key")
	if !validKey(key) {
		return problem.New(http.StatusBadRequest, "idempotency-key-required",
			"Send an Idempotency-Key header (1 to 255 printable ASCII characters) so a retried hold is not taken twice.")
	}
	var body holdRequest
	if err := web.Decode(r, &body); err != nil {
		return err
	}
	req := body.Request
	e, err := web.PublicEvent(r.Context(), s.EventCache, id)
	if err != nil {
		return err
	}
	if err := s.Gate.Allow(r, e, sess.Account); err != nil {
		return err
	}
	req.Account, req.Key = sess.Account, key
	start := time.Now()
	h, replayed, err := s.Inventory.Hold(r.Context(), e, req)
	s.reportHealth(e.ID, time.Since(start), err)
	if err != nil {
		if errors.Is(err, inventory.ErrSeatsTaken) {
			metrics.Add(r.Context(), metrics.HoldConflicts, 1)
		}
		return s.explainSeats(r.Context(), err)
	}
	metrics.Add(r.Context(), metrics.Holds, 1)
	status := http.StatusCreated
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		status = http.StatusOK
	} else {
		s.publishHold(h, live.SeatHeld)
	}
	w.Header().Set("Location", "/api/holds/"+web.Itoa(h.ID))
	web.WriteJSON(w, status, h)
	return nil
}

// holdRequest is a hold's body, whose shape is told by the members sent.
type holdRequest struct{ inventory.Request }

// CheckMembers refuses members of two shapes, empty or null ones too.
func (*holdRequest) CheckMembers(sent web.Members) error {
	shapes := 0
	for _, names := range [][]string{{"seats"}, {"pool", "quantity"}, {"best"}} {
		if slices.ContainsFunc(names, sent.Has) {
			shapes++
		}
	}
	if shapes > 1 {
		return InventoryError(inventory.ShapeError())
	}
	return nil
}

// validKey tells whether an Idempotency-Key is 1 to 255 printable ASCII
// characters (it is stored as text).
func validKey(k string) bool {
	if k == "" || len(k) > 255 {
		return false
	}
	for i := range len(k) {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// reportHealth feeds the waiting room's adaptive ceiling and the control
// room's series: latency of every hold, and whether it failed on our side
// (a taken seat is not a failure, but the control room counts it).
func (s *Handlers) reportHealth(eventID int64, latency time.Duration, err error) {
	outcome := queue.HoldOK
	switch {
	case errors.Is(err, inventory.ErrSeatsTaken):
		outcome = queue.HoldTaken
	case err != nil && InventoryError(err) != nil:
		outcome = queue.HoldRefused
	case err != nil:
		outcome = queue.HoldFailed
	}
	web.Background(s.Log, func(ctx context.Context) error { return s.Room.RecordHold(ctx, eventID, latency, outcome) })
}

// explainSeats tells a seat of another venue (400) from a seat that does not
// exist at all (404); only the catalog knows.
func (s *Handlers) explainSeats(ctx context.Context, err error) error {
	var se *inventory.SeatError
	if !errors.As(err, &se) || !errors.Is(err, inventory.ErrUnknownSeat) {
		return err
	}
	elsewhere, qerr := s.Seats.ExistingSeats(ctx, se.Seats)
	if qerr != nil || len(elsewhere) == 0 {
		return err
	}
	return &inventory.SeatError{Err: inventory.ErrForeignSeat, Seats: elsewhere}
}

func (s *Handlers) getHold(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	h, err := s.Inventory.Get(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, h)
	return nil
}

// releaseHold serves DELETE /api/holds/{id}.
func (s *Handlers) releaseHold(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	h, err := s.Inventory.Release(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	// Releasing keeps the shopping turn: the fan goes back to the map for
	// the time the turn has left (docs/waiting-room.md, "A release keeps the
	// turn"). Leaving the room, paying or the turn's end frees the slot.
	if h.Released {
		s.publishHold(h, live.SeatAvailable)
	}
	web.WriteJSON(w, http.StatusOK, h)
	return nil
}

// InventoryError maps inventory sentinels to problems.
func InventoryError(err error) error {
	var se *inventory.SeatError
	seats := []int64{}
	if errors.As(err, &se) {
		seats = se.Seats
	}
	switch {
	case errors.Is(err, inventory.ErrSeatsTaken):
		return problem.New(http.StatusConflict, "seats-taken",
			"Some of these seats were just taken by someone else. The map has been refreshed; pick again.").With("seats", seats)
	case errors.Is(err, inventory.ErrUnknownSeat):
		return problem.New(http.StatusNotFound, "seat-not-found", "Some requested seats or pools do not exist.").With("seats", seats)
	case errors.Is(err, inventory.ErrForeignSeat):
		return problem.New(http.StatusBadRequest, "seat-of-another-event", "Some requested seats belong to another venue or event.").With("seats", seats)
	case errors.Is(err, inventory.ErrSoldOut):
		return problem.New(http.StatusConflict, "sold-out", "Not enough tickets left for this request. Try fewer or another section.")
	case errors.Is(err, inventory.ErrSalesClosed):
		return problem.New(http.StatusForbidden, "sales-closed", "Sales for this event are not open.")
	case errors.Is(err, inventory.ErrAccountLimit):
		p := web.Refused(err, http.StatusConflict, "ticket-limit")
		if le := (*inventory.LimitError)(nil); errors.As(err, &le) {
			p = p.With("remaining", le.Remaining)
		}
		return p
	case errors.Is(err, inventory.ErrInvalidRequest):
		return web.Refused(err, http.StatusBadRequest, "invalid-hold")
	case errors.Is(err, inventory.ErrKeyReused):
		return problem.New(http.StatusUnprocessableEntity, "idempotency-key-reused",
			"This Idempotency-Key was already used for a different request; use a new key.")
	case errors.Is(err, inventory.ErrHoldNotFound):
		return problem.New(http.StatusNotFound, "hold-not-found", "No such hold.")
	case errors.Is(err, inventory.ErrHoldNotReleasable):
		return problem.New(http.StatusConflict, "hold-paid", "This hold has been paid and can no longer be released.")
	}
	return nil
}
