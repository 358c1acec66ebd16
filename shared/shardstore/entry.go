package shardstore

// Entry day: door staff, entry settings, ticket keys and transfers,
// check-ins and the conflicts offline gates report.

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// EntrySettings are an event's entry rules.
type EntrySettings struct {
	// DoorsOpenAt: scans before it answer "not valid yet" (nil: any time).
	DoorsOpenAt *time.Time
	// StaticCodes lets fans print a code that does not rotate.
	StaticCodes      bool
	TransfersAllowed bool
	MaxTransfers     int
}

// EntrySettings reads an event's entry rules; found is false when they
// were never set.
func (r reads) EntrySettings(ctx context.Context, eventID int64) (st EntrySettings, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `SELECT doors_open_at, static_codes, transfers_allowed, max_transfers
		FROM entry_settings WHERE event_id = $1`, eventID), &st.DoorsOpenAt, &st.StaticCodes, &st.TransfersAllowed, &st.MaxTransfers)
	return st, found, err
}

// SetEntrySettings replaces an event's entry rules.
func (s *Store) SetEntrySettings(ctx context.Context, eventID int64, v EntrySettings) error {
	_, err := s.db.Exec(ctx, `
		INSERT INTO entry_settings (event_id, doors_open_at, static_codes, transfers_allowed, max_transfers)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (event_id) DO UPDATE SET doors_open_at = $2, static_codes = $3, transfers_allowed = $4,
			max_transfers = $5, updated_at = now()`, eventID, v.DoorsOpenAt, v.StaticCodes, v.TransfersAllowed, v.MaxTransfers)
	return err
}

// IsDoorStaff tells whether an account was granted the doors of an event.
func (r reads) IsDoorStaff(ctx context.Context, eventID, account int64) (bool, error) {
	var granted bool
	err := r.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM door_staff WHERE event_id = $1 AND account_id = $2)`, eventID, account).Scan(&granted)
	return granted, err
}

// DoorEventsOf lists the events of this shard whose doors an account was
// granted. door_staff holds a few rows per event and no index leads with
// the account: this reads the table whole, which stays cheap while grants
// number in the thousands per shard (docs/entry.md, "My door events").
func (r reads) DoorEventsOf(ctx context.Context, account int64) ([]int64, error) {
	rows, err := r.q.Query(ctx, `SELECT event_id FROM door_staff WHERE account_id = $1`, account)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// DoorGrant is an account's right to an event's doors as its organizer
// sees it: the email they typed, never the account's name or id.
type DoorGrant struct {
	ID        int64
	Email     string
	GrantedAt time.Time
	// Account is whose grant it is (for the list's older grants, which
	// kept no email).
	Account int64
}

// GrantDoors makes an account door staff of an event, as email; granting
// twice is harmless: it returns the grant there is, created false.
func (s *Store) GrantDoors(ctx context.Context, eventID, account int64, email, name string, grantedBy int64) (g DoorGrant, created bool, err error) {
	// The no-op update makes RETURNING give an existing row; xmax is 0 on
	// a row this statement inserted.
	err = s.db.QueryRow(ctx, `INSERT INTO door_staff (event_id, account_id, email, name, granted_by) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (event_id, account_id) DO UPDATE SET event_id = excluded.event_id
		RETURNING id, coalesce(email, ''), created_at, xmax = 0`, eventID, account, email, name, grantedBy).Scan(&g.ID, &g.Email, &g.GrantedAt, &created)
	g.Account = account
	return g, created, err
}

// DoorGrants lists an event's door staff, oldest grant first.
func (s *Store) DoorGrants(ctx context.Context, eventID int64) ([]DoorGrant, error) {
	rows, err := s.db.Query(ctx, `SELECT id, coalesce(email, ''), created_at, account_id FROM door_staff
		WHERE event_id = $1 ORDER BY created_at, id`, eventID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[DoorGrant])
}

// RevokeDoors deletes an event's grant id; found is false when the event
// has none by that id.
func (s *Store) RevokeDoors(ctx context.Context, eventID, id int64) (found bool, err error) {
	tag, err := s.db.Exec(ctx, `DELETE FROM door_staff WHERE event_id = $1 AND id = $2`, eventID, id)
	return tag.RowsAffected() == 1, err
}

// KeyScope picks the paid tickets a keying step works on.
type KeyScope int

// Key scopes: the tickets bought by an account, or of an event.
const (
	BuyerTickets KeyScope = iota
	EventTickets
)

// where is the scope's condition on tickets t and orders o, of $1.
func (k KeyScope) where() string {
	if k == EventTickets {
		return `t.event_id = $1`
	}
	return `o.user_id = $1`
}

// UnkeyedBuyers lists the buyers of the paid tickets in scope (of arg)
// that have no key yet.
func (s *Store) UnkeyedBuyers(ctx context.Context, scope KeyScope, arg int64) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT o.user_id FROM tickets t JOIN orders o ON o.id = t.order_id
		LEFT JOIN ticket_keys k ON k.ticket_id = t.id
		WHERE `+scope.where()+` AND o.status = 'paid' AND k.ticket_id IS NULL`, arg)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// KeyTickets gives a key row (ring key keyID) to every paid ticket in scope
// that has none yet, held by its buyer under the name names gives.
func (s *Store) KeyTickets(ctx context.Context, scope KeyScope, arg int64, keyID string, names map[int64]string) error {
	ids, vals := make([]int64, 0, len(names)), make([]string, 0, len(names))
	for id, n := range names {
		ids, vals = append(ids, id), append(vals, n)
	}
	_, err := s.db.Exec(ctx, `
		INSERT INTO ticket_keys (ticket_id, event_id, key_id, holder_id, holder_name)
		SELECT t.id, t.event_id, $2, o.user_id, n.name
		FROM tickets t JOIN orders o ON o.id = t.order_id
		JOIN unnest($3::bigint[], $4::text[]) AS n (id, name) ON n.id = o.user_id
		WHERE `+scope.where()+` AND o.status = 'paid'
		ON CONFLICT (ticket_id) DO NOTHING`, arg, keyID, ids, vals)
	return err
}

// Rekey moves a holder's tickets keyed under a ring key no longer in ring
// to current.
func (s *Store) Rekey(ctx context.Context, holder int64, current string, ring []string) error {
	_, err := s.db.Exec(ctx, `UPDATE ticket_keys SET key_id = $2, updated_at = now()
		WHERE holder_id = $1 AND key_id <> ALL($3)`, holder, current, ring)
	return err
}

// A ticket's seat: the seat's label, or for a standing place the pool's
// name (the item's label counts all places of the item).
const (
	itemJoin  = `JOIN order_items i ON i.id = t.order_item_id LEFT JOIN ga_pools gp ON gp.id = i.pool_id`
	seatLabel = `coalesce(gp.name, i.label)`
)

// doorStatus is a ticket's order status as entry sees it: a paid order of
// a cancelled event (its refund asked through the outbox, or refused by
// the PSP until the organizer asks again) is cancelled, so its tickets
// admit nobody, show no code and cannot be sent on. The status copy tells
// this shard of the cancel first, and cancel_refund_counts has a row for
// each event whose refunds were asked; either is enough, as the refund
// step may fail after the copy landed. (Entry also reads the catalog,
// which has the cancel before either.)
//
// A ticket of a paid order given back on its own (a partial refund: void)
// reads refunded.
const doorStatus = `CASE WHEN o.status = 'paid' AND t.void_at IS NOT NULL THEN 'refunded'
	WHEN o.status = 'paid' AND (EXISTS (SELECT 1 FROM cancel_refund_counts cx WHERE cx.event_id = o.event_id)
		OR EXISTS (SELECT 1 FROM event_status es WHERE es.event_id = o.event_id AND es.status = 'cancelled'))
	THEN 'cancelled' ELSE o.status END`

// HeldTicket is a ticket its holder sees, with its event's rules.
type HeldTicket struct {
	ID, EventID  int64
	Seat, Holder string
	KeyID        string
	Generation   int
	Transfers    int
	OrderStatus  OrderStatus
	CheckedInAt  *time.Time
	Rules        EntrySettings // the event's, or the defaults given
}

// HeldEvents counts the keyed tickets an account holds, by event.
func (r reads) HeldEvents(ctx context.Context, holder int64) (map[int64]int, error) {
	rows, err := r.q.Query(ctx, `SELECT event_id, count(*) FROM ticket_keys WHERE holder_id = $1 GROUP BY event_id`, holder)
	if err != nil {
		return nil, err
	}
	out := map[int64]int{}
	var event int64
	var n int
	_, err = pgx.ForEachRow(rows, []any{&event, &n}, func() error {
		out[event] = n
		return nil
	})
	return out, err
}

// HeldPage asks for the tickets of events, in that order of events and by
// ticket id, after ticket After of event AfterEvent, at most Limit.
type HeldPage struct {
	Events            []int64
	AfterEvent, After int64
	Limit             int
}

// HeldTickets lists a page of the keyed tickets an account holds; rules
// stand in for events whose entry settings were never set.
func (r reads) HeldTickets(ctx context.Context, holder int64, p HeldPage, defaults EntrySettings) ([]HeldTicket, error) {
	return r.held(ctx, `k.holder_id = $1 AND k.event_id = ANY($4) AND (k.event_id <> $5 OR k.ticket_id > $6)
		ORDER BY array_position($4, k.event_id), k.ticket_id LIMIT $7`, holder, defaults, p.Events, p.AfterEvent, p.After, p.Limit)
}

// HeldTicket reads one keyed ticket the account holds (found false when
// it holds no such ticket).
func (r reads) HeldTicket(ctx context.Context, holder, ticket int64, defaults EntrySettings) (HeldTicket, bool, error) {
	list, err := r.held(ctx, `k.holder_id = $1 AND k.ticket_id = $4`, holder, defaults, ticket)
	if err != nil || len(list) == 0 {
		return HeldTicket{}, false, err
	}
	return list[0], true, nil
}

// held reads the held tickets that where (on $1 the holder, then its own
// arguments from $4) picks.
func (r reads) held(ctx context.Context, where string, holder int64, defaults EntrySettings, args ...any) ([]HeldTicket, error) {
	rows, err := r.q.Query(ctx, `
		SELECT k.ticket_id, k.event_id, `+seatLabel+`, k.holder_name, k.key_id, k.generation, k.transfers, `+doorStatus+`,
		       c.scanned_at, st.doors_open_at, coalesce(st.static_codes, false), coalesce(st.transfers_allowed, $2), coalesce(st.max_transfers, $3)
		FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id `+itemJoin+`
		LEFT JOIN checkins c ON c.ticket_id = k.ticket_id
		LEFT JOIN entry_settings st ON st.event_id = k.event_id
		WHERE `+where, append([]any{holder, defaults.TransfersAllowed, defaults.MaxTransfers}, args...)...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (HeldTicket, error) {
		var t HeldTicket
		return t, r.Scan(&t.ID, &t.EventID, &t.Seat, &t.Holder, &t.KeyID, &t.Generation, &t.Transfers, &t.OrderStatus,
			&t.CheckedInAt, &t.Rules.DoorsOpenAt, &t.Rules.StaticCodes, &t.Rules.TransfersAllowed, &t.Rules.MaxTransfers)
	})
}

// TicketToMove is a ticket locked for a transfer.
type TicketToMove struct {
	EventID     int64
	Holder      int64
	HolderName  string
	Seat        string
	OrderStatus OrderStatus
	Transfers   int
	Allowed     bool // the event allows transfers
	Limit       int  // how many
	Used        bool // checked in
}

// LockTicket locks a keyed ticket for a transfer; defaults stand in for
// entry settings never set.
func (t Tx) LockTicket(ctx context.Context, ticket int64, defaults EntrySettings) (m TicketToMove, found bool, err error) {
	// Locked first, read after: a statement reads as of its start, so one
	// that waited for a scan's lock would miss the admission it committed.
	if _, err := t.tx.Exec(ctx, `SELECT FROM ticket_keys WHERE ticket_id = $1 FOR UPDATE`, ticket); err != nil {
		return m, false, err
	}
	found, err = one(t.tx.QueryRow(ctx, `
		SELECT k.event_id, k.holder_id, k.holder_name, `+seatLabel+`, `+doorStatus+`, k.transfers,
		       coalesce(st.transfers_allowed, $2), coalesce(st.max_transfers, $3),
		       EXISTS (SELECT 1 FROM checkins c WHERE c.ticket_id = k.ticket_id)
		FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id `+itemJoin+`
		LEFT JOIN entry_settings st ON st.event_id = k.event_id
		WHERE k.ticket_id = $1`, ticket, defaults.TransfersAllowed, defaults.MaxTransfers),
		&m.EventID, &m.Holder, &m.HolderName, &m.Seat, &m.OrderStatus, &m.Transfers, &m.Allowed, &m.Limit, &m.Used)
	return m, found, err
}

// MoveTicket hands a ticket to another holder under a new key generation
// (ring key keyID), voiding every code of the old one, and records the
// transfer; it returns the new generation.
func (t Tx) MoveTicket(ctx context.Context, ticket, from, to int64, toName, keyID string) (generation int, err error) {
	if err := t.tx.QueryRow(ctx, `UPDATE ticket_keys SET holder_id = $2, holder_name = $3, generation = generation + 1,
		transfers = transfers + 1, key_id = $4, updated_at = now() WHERE ticket_id = $1 RETURNING generation`,
		ticket, to, toName, keyID).Scan(&generation); err != nil {
		return 0, err
	}
	_, err = t.tx.Exec(ctx, `INSERT INTO ticket_transfers (ticket_id, from_id, to_id, generation) VALUES ($1, $2, $3, $4)`,
		ticket, from, to, generation)
	return generation, err
}

// BundleTicket is one keyed ticket of an event, for offline gates.
type BundleTicket struct {
	ID          int64
	Generation  int
	KeyID       string
	Seat, Name  string
	OrderStatus OrderStatus
	Used        *time.Time
}

// BundleTickets lists an event's keyed tickets.
func (r reads) BundleTickets(ctx context.Context, eventID int64) ([]BundleTicket, error) {
	rows, err := r.q.Query(ctx, `
		SELECT k.ticket_id, k.generation, k.key_id, `+seatLabel+`, k.holder_name, `+doorStatus+`, c.scanned_at
		FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id `+itemJoin+`
		LEFT JOIN checkins c ON c.ticket_id = k.ticket_id
		WHERE k.event_id = $1 ORDER BY k.ticket_id`, eventID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (BundleTicket, error) {
		var t BundleTicket
		return t, r.Scan(&t.ID, &t.Generation, &t.KeyID, &t.Seat, &t.Name, &t.OrderStatus, &t.Used)
	})
}

// ScannedTicket is what a scan checks a code against.
type ScannedTicket struct {
	EventID     int64
	OrderStatus OrderStatus
	Seat        string
	KeyID       *string // nil: the ticket has no key, no code can be good
	Generation  *int
	Holder      *string
	DoorsOpenAt *time.Time
	StaticCodes *bool
	UsedAt      *time.Time
	UsedGate    *string
}

// ScannedTicket reads a ticket for a scan.
func (r reads) ScannedTicket(ctx context.Context, ticket int64) (t ScannedTicket, found bool, err error) {
	found, err = one(r.q.QueryRow(ctx, `
		SELECT t.event_id, `+doorStatus+`, `+seatLabel+`, k.key_id, k.generation, k.holder_name,
		       st.doors_open_at, st.static_codes, c.scanned_at, c.gate
		FROM tickets t JOIN orders o ON o.id = t.order_id `+itemJoin+`
		LEFT JOIN ticket_keys k ON k.ticket_id = t.id
		LEFT JOIN entry_settings st ON st.event_id = t.event_id
		LEFT JOIN checkins c ON c.ticket_id = t.id
		WHERE t.id = $1`, ticket),
		&t.EventID, &t.OrderStatus, &t.Seat, &t.KeyID, &t.Generation, &t.Holder, &t.DoorsOpenAt, &t.StaticCodes, &t.UsedAt, &t.UsedGate)
	return t, found, err
}

// LockScanned locks a ticket's key and order for an admission and reads
// them as they are now (a lock that waited reads the row it got): its key
// generation and its order's status.
func (t Tx) LockScanned(ctx context.Context, ticket int64) (generation int, order OrderStatus, err error) {
	err = t.tx.QueryRow(ctx, `SELECT k.generation, `+doorStatus+` FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id
		JOIN orders o ON o.id = t.order_id WHERE k.ticket_id = $1 FOR SHARE OF k, o`, ticket).Scan(&generation, &order)
	return generation, order, err
}

// CheckIn is one admission at a gate.
type CheckIn struct {
	Ticket, EventID int64
	Gate, ScanID    string
	Staff           int64
	At              time.Time
	Offline         bool
}

// CheckIn records an admission unless the ticket has one: landed tells
// whether this one did. The checkins primary key admits a ticket once.
func (t Tx) CheckIn(ctx context.Context, c CheckIn) (landed bool, err error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO checkins (ticket_id, event_id, gate, scan_id, staff_id, scanned_at, offline)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (ticket_id) DO NOTHING`,
		c.Ticket, c.EventID, c.Gate, c.ScanID, c.Staff, c.At, c.Offline)
	return err == nil && tag.RowsAffected() == 1, err
}

// LockCheckIn locks a ticket's admission of record.
func (t Tx) LockCheckIn(ctx context.Context, ticket int64) (c CheckIn, err error) {
	c.Ticket = ticket
	err = t.tx.QueryRow(ctx, `SELECT event_id, gate, scan_id, staff_id, scanned_at, offline FROM checkins WHERE ticket_id = $1 FOR UPDATE`, ticket).
		Scan(&c.EventID, &c.Gate, &c.ScanID, &c.Staff, &c.At, &c.Offline)
	return c, err
}

// ReplaceCheckIn makes an earlier offline scan the admission of record.
func (t Tx) ReplaceCheckIn(ctx context.Context, c CheckIn) error {
	_, err := t.tx.Exec(ctx, `UPDATE checkins SET gate = $2, scan_id = $3, staff_id = $4, scanned_at = $5, offline = true
		WHERE ticket_id = $1`, c.Ticket, c.Gate, c.ScanID, c.Staff, c.At)
	return err
}

// Conflict is a ticket two gates admitted: the losing scan and the
// admission of record.
type Conflict struct {
	Ticket    int64
	ScanID    string
	Gate      string
	At        time.Time
	FirstGate string
	FirstAt   time.Time
}

// RecordConflict lists a losing offline scan for the control room, once:
// a scan is one gate's scan id for one ticket (ids are each gate's own).
func (t Tx) RecordConflict(ctx context.Context, eventID int64, c Conflict) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO checkin_conflicts (event_id, ticket_id, scan_id, gate, scanned_at, first_gate, first_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (ticket_id, gate, scan_id) DO NOTHING`,
		eventID, c.Ticket, c.ScanID, c.Gate, c.At, c.FirstGate, c.FirstAt)
	return err
}

// DoorCounts counts an event's admissions and paid tickets, and reads its
// latest conflicts.
func (r reads) DoorCounts(ctx context.Context, eventID int64) (checkedIn, expected int64, conflicts []Conflict, err error) {
	err = r.q.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM checkins WHERE event_id = $1),
		(SELECT count(*) FROM tickets t JOIN orders o ON o.id = t.order_id WHERE t.event_id = $1 AND o.status = 'paid')`, eventID).
		Scan(&checkedIn, &expected)
	if err != nil {
		return 0, 0, nil, err
	}
	rows, err := r.q.Query(ctx, `SELECT ticket_id, gate, scanned_at, first_gate, first_at FROM checkin_conflicts
		WHERE event_id = $1 ORDER BY id DESC LIMIT 100`, eventID)
	if err != nil {
		return 0, 0, nil, err
	}
	conflicts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Conflict, error) {
		var c Conflict
		err := r.Scan(&c.Ticket, &c.Gate, &c.At, &c.FirstGate, &c.FirstAt)
		c.At, c.FirstAt = c.At.UTC(), c.FirstAt.UTC()
		return c, err
	})
	return checkedIn, expected, conflicts, err
}
