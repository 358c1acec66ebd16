package organizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/reject"
)

// ErrStale means a write was based on a version of the event that is no
// longer current (HTTP If-Match): someone changed it meanwhile.
var ErrStale = errors.New("event changed since it was read")

// IfMatch is what a write requires of the event's version: nil requires
// nothing (the write applies to the event as it is); otherwise the version
// must be one of those listed (an empty list matches none).
type IfMatch []int64

// watched are the event's columns a catalog trigger versions (migration
// 00009; its venue's name, 00010), with where each is in the API's event
// and what a person calls it.
var watched = []struct{ column, pointer, label string }{
	{"name", "/name", "the name"},
	{"venue_name", "/venue_name", "the venue's name"},
	{"city", "/city", "the city"},
	{"category", "/category", "the category"},
	{"description", "/description", "the description"},
	{"starts_at", "/starts_at", "the start"},
	{"sale_starts_at", "/sale_starts_at", "the sale's opening"},
	{"sale_ends_at", "/sale_ends_at", "the sale's end"},
	{"status", "/status", "the status"},
	{"max_per_account", "/max_per_account", "the tickets per account"},
	{"max_per_hold", "/max_per_hold", "the tickets per hold"},
	{"hold_ttl_seconds", "/hold_ttl_seconds", "the hold time"},
	{"waiting_room", "/waiting_room/enabled", "the waiting room (on or off)"},
	{"prequeue_opens_at", "/waiting_room/prequeue_opens_at", "the pre-queue opening"},
	{"queue_ceiling", "/waiting_room/ceiling", "the waiting room's ceiling"},
	{"active_ttl_seconds", "/waiting_room/active_ttl_seconds", "the shopping time"},
	{"admission_ttl_seconds", "/waiting_room/admission_ttl_seconds", "the admission time"},
	{"admission_paused", "/waiting_room/paused", "admission paused"},
	{"price_levels", "/price_levels", "the prices"},
}

// write runs change in a transaction that holds the event's row lock, if
// the organizer owns the event, it is not cancelled (its orders are being
// refunded) and its version satisfies ifMatch; it returns the event as
// changed (its status and sale end copied to its shard if they changed:
// enqueueCopy). The lock orders concurrent writes, so a second write based on
// the same version finds it stale. Every read goes through the
// transaction: a write holding its connection and the lock never waits
// for a second connection (writers would starve a small pool).
func (s *Service) write(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, change func(tx pgx.Tx, e event.Event) error) (event.Event, error) {
	return s.locked(ctx, organizerID, eventID, ifMatch, func(tx pgx.Tx, e event.Event) error {
		if e.Status == event.Cancelled {
			return reject.New(ErrInvalidEvent, "", "A cancelled event cannot change.")
		}
		return change(tx, e)
	})
}

// locked is write without its refusal of a cancelled event: change
// decides (ChangeStatus cancels a cancelled event again).
func (s *Service) locked(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, change func(tx pgx.Tx, e event.Event) error) (event.Event, error) {
	var changed event.Event
	var msg int64
	err := pgx.BeginFunc(ctx, s.catalog, func(tx pgx.Tx) error {
		e, err := s.lock(ctx, tx, organizerID, eventID, ifMatch)
		if err != nil {
			return err
		}
		if err := change(tx, e); err != nil {
			return err
		}
		if changed, err = event.Read(ctx, tx, eventID); err != nil {
			return err
		}
		// Every organizer edit, whichever endpoint: an opened presale's
		// rules hold until it ends (docs/fairness.md).
		if err := presale.Keeps(ctx, tx, e, changed, time.Now()); err != nil {
			return err
		}
		msg, err = enqueueCopy(ctx, tx, e, changed)
		return err
	})
	if err != nil {
		return event.Event{}, err
	}
	s.copyNow(ctx, changed, msg)
	return changed, nil
}

// lock takes the event's row lock in tx and returns the event, if the
// organizer owns it and its version satisfies ifMatch.
func (s *Service) lock(ctx context.Context, tx pgx.Tx, organizerID, eventID int64, ifMatch IfMatch) (event.Event, error) {
	owner, version, changed, found, err := catalogstore.EventCreator(ctx, tx, eventID, true)
	if err == nil && (!found || owner == nil || *owner != organizerID) {
		return event.Event{}, fmt.Errorf("event %d: %w", eventID, event.ErrNotFound)
	}
	if err != nil {
		return event.Event{}, err
	}
	e, err := event.Read(ctx, tx, eventID)
	if err != nil {
		return event.Event{}, err
	}
	if ifMatch != nil && !slices.Contains(ifMatch, version) {
		return event.Event{}, stale(e, ifMatch, changed)
	}
	return e, nil
}

// unchanged holds when none of columns changed after the newest version
// of ifMatch, in tx that holds e's row lock (see write): a live control
// (the control room's ceiling, its resume) is refused only if what it
// writes changed since its page read it, not because a neighbouring
// setting did (a pause a second earlier would otherwise refuse every
// ceiling until the page reloaded). It explains a refusal as stale does,
// naming only those columns.
func unchanged(ctx context.Context, tx pgx.Tx, e event.Event, ifMatch IfMatch, columns ...string) error {
	if ifMatch == nil {
		return nil
	}
	changed, err := catalogstore.EventChanges(ctx, tx, e.ID)
	if err != nil {
		return fmt.Errorf("versions of event %d: %w", e.ID, err)
	}
	since, mine := newest(ifMatch, e.Version), map[string]int64{}
	for _, c := range columns {
		if changed[c] > since {
			mine[c] = changed[c]
		}
	}
	if since > 0 && len(mine) == 0 {
		return nil
	}
	return stale(e, ifMatch, mine)
}

// newest is the newest version of ifMatch the event has had (0 if none).
func newest(ifMatch IfMatch, version int64) int64 {
	since := int64(0)
	for _, v := range ifMatch {
		if v <= version {
			since = max(since, v)
		}
	}
	return since
}

// stale explains a refused write: what changed after the newest version
// it was based on, each with its value now. If-Match naming no version the
// event ever had (only weak tags, tags that are not our ETags, versions
// from 0 or from the future) is said as such.
func stale(now event.Event, ifMatch IfMatch, changed map[string]int64) error {
	since := newest(ifMatch, now.Version)
	if since <= 0 {
		return reject.New(ErrStale, "", fmt.Sprintf(
			`If-Match names no version of this event, so nothing was saved: send the ETag that reading the event answered (it is now "%d"); a weak tag (W/) never matches.`,
			now.Version))
	}
	doc, err := json.Marshal(now)
	if err != nil {
		return err
	}
	var current map[string]any
	if err := json.Unmarshal(doc, &current); err != nil {
		return err
	}
	r := &reject.Error{Kind: ErrStale, Reasons: []reject.Reason{{Detail: fmt.Sprintf(
		"This event changed since you loaded it (version %d, now %d), so nothing was saved.", since, now.Version)}}}
	for _, w := range watched {
		if changed[w.column] <= since {
			continue
		}
		detail := strings.ToUpper(w.label[:1]) + w.label[1:] + " changed"
		if v, ok := at(current, w.pointer); ok {
			detail += ": now " + v
		}
		r.Reasons = append(r.Reasons, reject.Reason{Pointer: w.pointer, Detail: detail + "."})
	}
	r.Reasons = append(r.Reasons, reject.Reason{Detail: "Reload the event to see its current settings, then make your changes again."})
	return r
}

// at reads a scalar of a decoded JSON document by its pointer, as text.
func at(doc map[string]any, pointer string) (string, bool) {
	var v any = doc
	for _, key := range strings.Split(pointer, "/")[1:] {
		m, ok := v.(map[string]any)
		if !ok {
			return "", false
		}
		v = m[key]
	}
	switch v := v.(type) {
	case string, float64, bool:
		return fmt.Sprint(v), true
	case nil:
		return "none", true
	}
	return "", false
}
