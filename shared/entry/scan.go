package entry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/shared/text"
)

// Outcomes of a scan. Only Admitted opens the gate.
const (
	Admitted    = "admitted"
	AlreadyUsed = "already-used"
	WrongEvent  = "wrong-event"
	Void        = "void"
	NotValidYet = "not-valid-yet"
	Expired     = "expired"
	Invalid     = "invalid"
	// Conflict: an offline gate admitted a ticket another gate had
	// admitted first; reported at sync for the control room.
	Conflict = "conflict"
)

// Scan is one read of a code at a gate.
type Scan struct {
	Event int64
	Staff int64
	Gate  string
	// ID makes the scan idempotent: a retried request with the same ID
	// gets the same answer instead of "already used".
	ID   string
	Code string
	// At is when the gate read the code (now for online scans).
	At      time.Time
	Offline bool
}

// Result is what the gate shows.
type Result struct {
	Outcome   string     `json:"outcome"`
	Message   string     `json:"message"`
	Ticket    int64      `json:"ticket_id,omitempty"`
	Name      string     `json:"name,omitempty"`
	Seat      string     `json:"seat,omitempty"`
	FirstGate string     `json:"first_gate,omitempty"`
	FirstAt   *time.Time `json:"first_at,omitempty"`
}

func (s Scan) check() error {
	// The gate's name comes back in other gates' conflict messages.
	if text.Blank(s.Gate) || text.Length(s.Gate) > 40 || !text.OneLine(s.Gate) {
		return ErrBadGate
	}
	if s.ID == "" || text.Length(s.ID) > 64 {
		return ErrBadScanID
	}
	return nil
}

func answer(outcome, msg string, args ...any) Result {
	return Result{Outcome: outcome, Message: fmt.Sprintf(msg, args...)}
}

// Check answers an online scan at d's door at once; sc's event and staff
// are d's.
func (s *Service) Check(ctx context.Context, d Door, sc Scan) (Result, error) {
	sc.Event, sc.Staff = d.Event, d.Staff
	if err := sc.check(); err != nil {
		return Result{}, err
	}
	sc.At = s.Now()
	return s.scan(ctx, d, sc)
}

// forged is the one answer to a code whose signature does not verify,
// whatever the ticket: unknown, of another event, its generation ahead or
// behind, keyed under a retired key. Told apart, they let anyone with a
// door learn which ticket ids exist and which were transferred.
var forged = answer(Invalid, "Invalid code: it is not a ticket of ours, or it was forged or changed. Ask the fan to reopen the live ticket.")

// scan verifies the code and, when it is good, records the admission.
func (s *Service) scan(ctx context.Context, d Door, sc Scan) (Result, error) {
	code, err := Parse(sc.Code)
	if err != nil {
		return answer(Invalid, "Not a ticket code. Scan the code on the fan's ticket page."), nil
	}
	st, err := s.shards.OfRow(code.Ticket)
	if errors.Is(err, shard.ErrUnknownEvent) || errors.Is(err, shard.ErrUnknownShard) {
		return forged, nil
	}
	if err != nil {
		return Result{}, err
	}
	t, found, err := st.ScannedTicket(ctx, code.Ticket)
	if err != nil {
		return Result{}, fmt.Errorf("scan ticket %d: %w", code.Ticket, err)
	}
	known := found && t.KeyID != nil && code.Generation <= *t.Generation
	// An unknown ticket's code is verified all the same, under the current
	// ring key, so that it takes the time a known one takes.
	k := TicketKey{Ticket: code.Ticket, Generation: code.Generation, KeyID: s.ring.Current()}
	if known {
		k.KeyID = *t.KeyID
	}
	pub, ok := s.ring.Public(k)
	if !ok || !code.Signed(pub) || !known {
		return forged, nil
	}
	if t.EventID != sc.Event {
		// Perhaps another organizer's event: not a word about its holder.
		r := answer(WrongEvent, "Wrong event: this ticket is for event %d.", t.EventID)
		r.Ticket = code.Ticket
		return r, nil
	}
	r := Result{Ticket: code.Ticket, Name: *t.Holder, Seat: t.Seat}
	deny := func(outcome, msg string, args ...any) (Result, error) {
		r.Outcome, r.Message = outcome, fmt.Sprintf(msg, args...)
		return r, nil
	}
	why := void(code.Generation, *t.Generation, d.order(t.OrderStatus))
	switch {
	case why != "":
		return deny(Void, "%s", why)
	case code.Static && (t.StaticCodes == nil || !*t.StaticCodes):
		return deny(Invalid, "Printed codes are not accepted at this event: ask for the live ticket on the phone.")
	}
	if t.UsedAt != nil && !sc.Offline {
		// Fast path; the insert below is what actually guards.
		return record(ctx, st, sc, code.Generation, r)
	}
	switch code.Timing(sc.At) {
	case -1:
		return deny(Expired, "Expired code (a screenshot or a frozen screen): ask the fan to reopen the live ticket.")
	case 1:
		return deny(NotValidYet, "Not valid yet: the phone's clock is ahead. Ask the fan to set the time automatically.")
	}
	if t.DoorsOpenAt != nil && sc.At.Before(*t.DoorsOpenAt) {
		return deny(NotValidYet, "Not valid yet: doors open at %s UTC.", t.DoorsOpenAt.UTC().Format("15:04"))
	}
	return record(ctx, st, sc, code.Generation, r)
}

// void tells why a code of generation gen no longer admits, or "".
func void(gen, current int, order shardstore.OrderStatus) string {
	switch {
	case gen < current:
		return "Void: this ticket was transferred; the old code no longer admits anyone."
	case order != shardstore.OrderPaid:
		return fmt.Sprintf("Void: this ticket's order was %s.", order)
	}
	return ""
}

// record writes the admission of a code of generation gen. The checkins
// primary key admits a ticket once: of any number of concurrent scans
// exactly one insert lands and the rest read the winner. An offline scan
// that lost is a conflict; if it was in fact earlier it becomes the
// admission of record instead. The ticket is checked again under lock: a
// transfer or refund that committed since scan read it voids the code, and
// none commits before this admission has.
func record(ctx context.Context, st *shardstore.Store, sc Scan, gen int, r Result) (Result, error) {
	err := st.WithTx(ctx, func(tx shardstore.Tx) error {
		current, order, err := tx.LockScanned(ctx, r.Ticket)
		if err != nil {
			return err
		}
		if why := void(gen, current, order); why != "" {
			r.Outcome, r.Message = Void, why
			return nil
		}
		this := shardstore.CheckIn{Ticket: r.Ticket, EventID: sc.Event, Gate: sc.Gate, ScanID: sc.ID, Staff: sc.Staff, At: sc.At, Offline: sc.Offline}
		landed, err := tx.CheckIn(ctx, this)
		if err != nil {
			return err
		}
		if landed {
			r.Outcome, r.Message = Admitted, "Admitted."
			return nil
		}
		first, err := tx.LockCheckIn(ctx, r.Ticket)
		gate, scanID, at := first.Gate, first.ScanID, first.At
		switch {
		case err != nil:
			return err
		case scanID == sc.ID && first.Staff == sc.Staff && gate == sc.Gate:
			// A retried request. Scan ids are the gate's own: another
			// gate's scan with the same id is another person.
			r.Outcome, r.Message = Admitted, "Admitted."
			return nil
		case !sc.Offline:
			at = at.UTC()
			r.Outcome, r.FirstGate, r.FirstAt = AlreadyUsed, gate, &at
			r.Message = fmt.Sprintf("Already used at %s UTC, gate %s.", at.Format("15:04:05"), gate)
			return nil
		}
		loser := shardstore.Conflict{Ticket: r.Ticket, ScanID: sc.ID, Gate: sc.Gate, At: sc.At, FirstGate: gate, FirstAt: at}
		r.Outcome, r.FirstGate, r.FirstAt = Conflict, gate, &at
		r.Message = fmt.Sprintf("Conflict: admitted offline at gate %s, but gate %s admitted it first at %s UTC.",
			sc.Gate, gate, at.UTC().Format("15:04:05"))
		if sc.At.Before(at) {
			if err := tx.ReplaceCheckIn(ctx, this); err != nil {
				return err
			}
			loser = shardstore.Conflict{Ticket: r.Ticket, ScanID: scanID, Gate: gate, At: at, FirstGate: sc.Gate, FirstAt: sc.At}
			r.Outcome, r.FirstGate, r.FirstAt = Admitted, "", nil
			r.Message = "Admitted (an offline gate admitted it later; that scan is the conflict)."
		}
		return tx.RecordConflict(ctx, sc.Event, loser)
	})
	if err != nil {
		return Result{}, fmt.Errorf("check in ticket %d: %w", r.Ticket, err)
	}
	return r, nil
}

// MaxSync is the most scans one sync carries (the page sends 200 at a time,
// well inside the request body cap).
const MaxSync = 500

// Sync records the admissions an offline gate at d's door made. Each scan
// is checked as at the time the gate read it; a ticket another gate
// admitted first comes back as a Conflict and is listed for the control
// room.
func (s *Service) Sync(ctx context.Context, d Door, gate string, scans []Scan) ([]Result, error) {
	if len(scans) > MaxSync {
		return nil, ErrTooManyScans
	}
	now := s.Now()
	out := make([]Result, 0, len(scans))
	for _, sc := range scans {
		sc.Event, sc.Staff, sc.Gate, sc.Offline = d.Event, d.Staff, gate, true
		if err := sc.check(); err != nil {
			return nil, err
		}
		if sc.At.IsZero() || sc.At.After(now) {
			sc.At = now // a gate clock ahead of ours cannot date scans in the future
		}
		r, err := s.scan(ctx, d, sc)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Stats are the door's counters and the conflicts to look into.
type Stats struct {
	CheckedIn int64           `json:"checked_in"`
	Expected  int64           `json:"expected"`
	Conflicts []ConflictEntry `json:"conflicts"`
}

// Stats counts an event's admissions against its paid tickets.
func (s *Service) Stats(ctx context.Context, event int64) (Stats, error) {
	var out Stats
	st, err := s.shards.OfEvent(ctx, event)
	if err != nil {
		return out, err
	}
	var conflicts []shardstore.Conflict
	out.CheckedIn, out.Expected, conflicts, err = st.DoorCounts(ctx, event)
	out.Conflicts = shardstore.Rows(conflicts, conflict)
	return out, err
}
