package entry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/shard"
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
	if s.Gate == "" || len(s.Gate) > 40 {
		return ErrBadGate
	}
	if s.ID == "" || len(s.ID) > 64 {
		return ErrBadScanID
	}
	return nil
}

func answer(outcome, msg string, args ...any) Result {
	return Result{Outcome: outcome, Message: fmt.Sprintf(msg, args...)}
}

// Check answers an online scan at once; the caller checked that the
// scanner is door staff (Staff).
func (s *Service) Check(ctx context.Context, sc Scan) (Result, error) {
	if err := sc.check(); err != nil {
		return Result{}, err
	}
	sc.At = s.Now()
	return s.scan(ctx, sc)
}

type ticketRow struct {
	event    int64
	status   string
	seat     string
	keyID    *string
	gen      *int
	name     *string
	doors    *time.Time
	statics  *bool
	used     *time.Time
	usedGate *string
}

// scan verifies the code and, when it is good, records the admission.
func (s *Service) scan(ctx context.Context, sc Scan) (Result, error) {
	code, err := Parse(sc.Code)
	if err != nil {
		return answer(Invalid, "Not a ticket code. Scan the code on the fan's ticket page."), nil
	}
	pool, err := s.shards.ForRow(code.Ticket)
	if errors.Is(err, shard.ErrUnknownEvent) || errors.Is(err, shard.ErrUnknownShard) {
		return answer(Invalid, "No such ticket: the code is not one of ours."), nil
	}
	if err != nil {
		return Result{}, err
	}
	var t ticketRow
	err = pool.QueryRow(ctx, `
		SELECT t.event_id, o.status, `+seatLabel+`, k.key_id, k.generation, k.holder_name,
		       st.doors_open_at, st.static_codes, c.scanned_at, c.gate
		FROM tickets t JOIN orders o ON o.id = t.order_id `+itemJoin+`
		LEFT JOIN ticket_keys k ON k.ticket_id = t.id
		LEFT JOIN entry_settings st ON st.event_id = t.event_id
		LEFT JOIN checkins c ON c.ticket_id = t.id
		WHERE t.id = $1`, code.Ticket).
		Scan(&t.event, &t.status, &t.seat, &t.keyID, &t.gen, &t.name, &t.doors, &t.statics, &t.used, &t.usedGate)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && t.keyID == nil) {
		return answer(Invalid, "No such ticket: the code is not one of ours."), nil
	}
	if err != nil {
		return Result{}, fmt.Errorf("scan ticket %d: %w", code.Ticket, err)
	}
	if code.Generation > *t.gen {
		return answer(Invalid, "Forged code: its signature does not match the ticket."), nil
	}
	pub, ok := s.ring.Public(TicketKey{Ticket: code.Ticket, Generation: code.Generation, KeyID: *t.keyID})
	if !ok || !code.Signed(pub) {
		return answer(Invalid, "Forged or outdated code: its signature does not match the ticket."), nil
	}
	r := Result{Ticket: code.Ticket, Name: *t.name, Seat: t.seat}
	deny := func(outcome, msg string, args ...any) (Result, error) {
		r.Outcome, r.Message = outcome, fmt.Sprintf(msg, args...)
		return r, nil
	}
	switch {
	case t.event != sc.Event:
		return deny(WrongEvent, "Wrong event: this ticket is for event %d.", t.event)
	case code.Generation < *t.gen:
		return deny(Void, "Void: this ticket was transferred; the old code no longer admits anyone.")
	case t.status != "paid":
		return deny(Void, "Void: this ticket's order was %s.", t.status)
	case code.Static && (t.statics == nil || !*t.statics):
		return deny(Invalid, "Printed codes are not accepted at this event: ask for the live ticket on the phone.")
	}
	if t.used != nil && !sc.Offline {
		// Fast path; the insert below is what actually guards.
		return s.record(ctx, pool, sc, r)
	}
	switch code.Timing(sc.At) {
	case -1:
		return deny(Expired, "Expired code (a screenshot or a frozen screen): ask the fan to reopen the live ticket.")
	case 1:
		return deny(NotValidYet, "Not valid yet: the phone's clock is ahead. Ask the fan to set the time automatically.")
	}
	if t.doors != nil && sc.At.Before(*t.doors) {
		return deny(NotValidYet, "Not valid yet: doors open at %s UTC.", t.doors.UTC().Format("15:04"))
	}
	return s.record(ctx, pool, sc, r)
}

// record writes the admission. The checkins primary key admits a ticket
// once: of any number of concurrent scans exactly one insert lands and the
// rest read the winner. An offline scan that lost is a conflict; if it was
// in fact earlier it becomes the admission of record instead.
func (s *Service) record(ctx context.Context, pool *pgxpool.Pool, sc Scan, r Result) (Result, error) {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO checkins (ticket_id, event_id, gate, scan_id, staff_id, scanned_at, offline)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (ticket_id) DO NOTHING`,
			r.Ticket, sc.Event, sc.Gate, sc.ID, sc.Staff, sc.At, sc.Offline)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			r.Outcome, r.Message = Admitted, "Admitted."
			return nil
		}
		var gate, scanID string
		var at time.Time
		if err := tx.QueryRow(ctx, `SELECT gate, scan_id, scanned_at FROM checkins WHERE ticket_id = $1 FOR UPDATE`, r.Ticket).
			Scan(&gate, &scanID, &at); err != nil {
			return err
		}
		if scanID == sc.ID {
			r.Outcome, r.Message = Admitted, "Admitted."
			return nil
		}
		if !sc.Offline {
			at = at.UTC()
			r.Outcome, r.FirstGate, r.FirstAt = AlreadyUsed, gate, &at
			r.Message = fmt.Sprintf("Already used at %s UTC, gate %s.", at.Format("15:04:05"), gate)
			return nil
		}
		loser := conflictRow{scanID: sc.ID, gate: sc.Gate, at: sc.At, firstGate: gate, firstAt: at}
		r.Outcome, r.FirstGate, r.FirstAt = Conflict, gate, &at
		if sc.At.Before(at) {
			if _, err := tx.Exec(ctx, `UPDATE checkins SET gate = $2, scan_id = $3, staff_id = $4, scanned_at = $5, offline = true
				WHERE ticket_id = $1`, r.Ticket, sc.Gate, sc.ID, sc.Staff, sc.At); err != nil {
				return err
			}
			loser = conflictRow{scanID: scanID, gate: gate, at: at, firstGate: sc.Gate, firstAt: sc.At}
			r.Outcome, r.FirstGate, r.FirstAt = Admitted, "", nil
		}
		if r.Outcome == Conflict {
			r.Message = fmt.Sprintf("Conflict: admitted offline at gate %s, but gate %s admitted it first at %s UTC.",
				sc.Gate, gate, at.UTC().Format("15:04:05"))
		} else {
			r.Message = "Admitted (an offline gate admitted it later; that scan is the conflict)."
		}
		_, err = tx.Exec(ctx, `INSERT INTO checkin_conflicts (event_id, ticket_id, scan_id, gate, scanned_at, first_gate, first_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (scan_id) DO NOTHING`,
			sc.Event, r.Ticket, loser.scanID, loser.gate, loser.at, loser.firstGate, loser.firstAt)
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("check in ticket %d: %w", r.Ticket, err)
	}
	return r, nil
}

type conflictRow struct {
	scanID, gate, firstGate string
	at, firstAt             time.Time
}

// MaxSync is the most scans one sync carries (the page sends 200 at a time,
// well inside the request body cap).
const MaxSync = 500

// Sync records the admissions an offline gate made. Each scan is checked
// as at the time the gate read it; a ticket another gate admitted first
// comes back as a Conflict and is listed for the control room.
func (s *Service) Sync(ctx context.Context, event, staff int64, gate string, scans []Scan) ([]Result, error) {
	if len(scans) > MaxSync {
		return nil, ErrTooManyScans
	}
	now := s.Now()
	out := make([]Result, 0, len(scans))
	for _, sc := range scans {
		sc.Event, sc.Staff, sc.Gate, sc.Offline = event, staff, gate, true
		if err := sc.check(); err != nil {
			return nil, err
		}
		if sc.At.IsZero() || sc.At.After(now) {
			sc.At = now // a gate clock ahead of ours cannot date scans in the future
		}
		r, err := s.scan(ctx, sc)
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

// ConflictEntry is a ticket admitted by two gates.
type ConflictEntry struct {
	Ticket    int64     `json:"ticket_id"`
	Gate      string    `json:"gate"`
	At        time.Time `json:"scanned_at"`
	FirstGate string    `json:"first_gate"`
	FirstAt   time.Time `json:"first_at"`
}

// Stats counts an event's admissions against its paid tickets.
func (s *Service) Stats(ctx context.Context, event int64) (Stats, error) {
	var st Stats
	pool, err := s.shards.ForEvent(ctx, event)
	if err != nil {
		return st, err
	}
	err = pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM checkins WHERE event_id = $1),
		(SELECT count(*) FROM tickets t JOIN orders o ON o.id = t.order_id WHERE t.event_id = $1 AND o.status = 'paid')`, event).
		Scan(&st.CheckedIn, &st.Expected)
	if err != nil {
		return st, err
	}
	rows, err := pool.Query(ctx, `SELECT ticket_id, gate, scanned_at, first_gate, first_at FROM checkin_conflicts
		WHERE event_id = $1 ORDER BY id DESC LIMIT 100`, event)
	if err != nil {
		return st, err
	}
	st.Conflicts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (ConflictEntry, error) {
		var c ConflictEntry
		err := r.Scan(&c.Ticket, &c.Gate, &c.At, &c.FirstGate, &c.FirstAt)
		c.At, c.FirstAt = c.At.UTC(), c.FirstAt.UTC()
		return c, err
	})
	return st, err
}
