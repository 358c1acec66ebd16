package entry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Ahead is how many steps of codes past the current one the fan's page
// gets, so the live ticket keeps rotating through a minute without signal.
const Ahead = 4

// Ticket is a fan's ticket as the ticket page shows it.
type Ticket struct {
	ID          int64       `json:"id"`
	EventID     int64       `json:"event_id"`
	Seat        string      `json:"seat"`
	Holder      string      `json:"holder"`
	Status      string      `json:"status"` // valid, used or void
	CheckedInAt *time.Time  `json:"checked_in_at,omitempty"`
	Codes       []TimedCode `json:"codes,omitempty"`
	// Static is the printable code, when the event accepts them.
	Static        string `json:"static_code,omitempty"`
	TransfersLeft int    `json:"transfers_left"`
}

// TimedCode is the rotating code of one time step.
type TimedCode struct {
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	Code  string    `json:"code"`
}

// Mine lists the tickets an account holds on every shard, with their
// codes for now and the next Ahead steps.
func (s *Service) Mine(ctx context.Context, account int64) ([]Ticket, error) {
	out := []Ticket{}
	ring := make([]string, 0, len(s.ring.keys))
	for _, k := range s.ring.keys {
		ring = append(ring, k.ID)
	}
	now := s.Now()
	for _, id := range s.shards.IDs() {
		pool, err := s.shards.Pool(id)
		if err != nil {
			return nil, err
		}
		if err := s.keyTickets(ctx, pool, `o.user_id = $1`, account); err != nil {
			return nil, err
		}
		// Tickets keyed under a retired ring key move to the current one.
		if _, err := pool.Exec(ctx, `UPDATE ticket_keys SET key_id = $2, updated_at = now()
			WHERE holder_id = $1 AND key_id <> ALL($3)`, account, s.ring.Current(), ring); err != nil {
			return nil, err
		}
		rows, err := pool.Query(ctx, `
			SELECT k.ticket_id, k.event_id, `+seatLabel+`, k.holder_name, k.key_id, k.generation, k.transfers, o.status,
			       c.scanned_at, coalesce(st.static_codes, false), coalesce(st.transfers_allowed, $2), coalesce(st.max_transfers, $3)
			FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id `+itemJoin+`
			LEFT JOIN checkins c ON c.ticket_id = k.ticket_id
			LEFT JOIN entry_settings st ON st.event_id = k.event_id
			WHERE k.holder_id = $1 ORDER BY k.event_id, k.ticket_id`, account, defaults.TransfersAllowed, defaults.MaxTransfers)
		if err != nil {
			return nil, err
		}
		var t Ticket
		var k TicketKey
		var status string
		var statics, allowed bool
		var limit, used int
		_, err = pgx.ForEachRow(rows, []any{&t.ID, &t.EventID, &t.Seat, &t.Holder, &k.KeyID, &k.Generation, &used, &status,
			&t.CheckedInAt, &statics, &allowed, &limit}, func() error {
			k.Ticket = t.ID
			tk := t
			tk.Status = "valid"
			switch {
			case status != "paid":
				tk.Status = "void"
			case t.CheckedInAt != nil:
				tk.Status = "used"
			}
			if tk.Status == "valid" {
				if allowed {
					tk.TransfersLeft = max(0, limit-used)
				}
				for step := StepAt(now); step <= StepAt(now)+Ahead; step++ {
					code, err := s.ring.Rotating(k, step)
					if err != nil {
						return err
					}
					from := time.Unix(step*int64(Step/time.Second), 0).UTC()
					tk.Codes = append(tk.Codes, TimedCode{From: from, Until: from.Add(Step), Code: code})
				}
				if statics {
					var err error
					if tk.Static, err = s.ring.Static(k); err != nil {
						return err
					}
				}
			}
			out = append(out, tk)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("tickets of account %d: %w", account, err)
		}
	}
	return out, nil
}

// Sent tells a transfer's recipient what they got.
type Sent struct {
	Ticket     int64
	Generation int
	Seat       string
	From       string // the sender's name
	To         Person
	Email      string
}

// Transfer hands a ticket to the account with email: the ticket gets a new
// key generation, so every code of the old holder is void at once. Only
// the holder learns whether an email has an account.
func (s *Service) Transfer(ctx context.Context, ticket, from int64, email string) (Person, error) {
	var to Person
	pool, err := s.shards.ForRow(ticket)
	if err != nil {
		return to, ErrNotFound
	}
	if err := s.keyTickets(ctx, pool, `o.user_id = $1`, from); err != nil {
		return to, err
	}
	sent := Sent{Ticket: ticket, Email: email}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var holder int64
		var status string
		var transfers, limit int
		var allowed, used bool
		err := tx.QueryRow(ctx, `
			SELECT k.holder_id, k.holder_name, `+seatLabel+`, o.status, k.transfers,
			       coalesce(st.transfers_allowed, $2), coalesce(st.max_transfers, $3),
			       EXISTS (SELECT 1 FROM checkins c WHERE c.ticket_id = k.ticket_id)
			FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id `+itemJoin+`
			LEFT JOIN entry_settings st ON st.event_id = k.event_id
			WHERE k.ticket_id = $1 FOR UPDATE OF k`, ticket, defaults.TransfersAllowed, defaults.MaxTransfers).
			Scan(&holder, &sent.From, &sent.Seat, &status, &transfers, &allowed, &limit, &used)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && holder != from) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if to, err = s.byEmail(ctx, email); err != nil {
			return err
		}
		switch {
		case to.ID == from:
			return fmt.Errorf("%w: the ticket is already yours", ErrNoTransfer)
		case status != "paid":
			return fmt.Errorf("%w: the ticket is void (order %s)", ErrNoTransfer, status)
		case used:
			return fmt.Errorf("%w: the ticket was already used at the door", ErrNoTransfer)
		case !allowed:
			return fmt.Errorf("%w: the organizer does not allow transfers for this event", ErrNoTransfer)
		case transfers >= limit:
			return fmt.Errorf("%w: this ticket was already transferred the %d time(s) the organizer allows", ErrNoTransfer, limit)
		}
		if err := tx.QueryRow(ctx, `UPDATE ticket_keys SET holder_id = $2, holder_name = $3, generation = generation + 1,
			transfers = transfers + 1, key_id = $4, updated_at = now() WHERE ticket_id = $1 RETURNING generation`,
			ticket, to.ID, to.Name, s.ring.Current()).Scan(&sent.Generation); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO ticket_transfers (ticket_id, from_id, to_id, generation) VALUES ($1, $2, $3, $4)`,
			ticket, from, to.ID, sent.Generation)
		return err
	})
	if err == nil && s.Sent != nil {
		sent.To = to
		s.Sent(ctx, sent)
	}
	return to, err
}

// Bundle is what an offline gate needs to verify an event's codes: each
// ticket's public key, nothing that can sign.
type Bundle struct {
	Event       int64          `json:"event_id"`
	GeneratedAt time.Time      `json:"generated_at"`
	StepSeconds int            `json:"step_seconds"`
	Tolerance   int            `json:"tolerance_steps"`
	DoorsOpenAt *time.Time     `json:"doors_open_at"`
	StaticCodes bool           `json:"static_codes"`
	Tickets     []BundleTicket `json:"tickets"`
}

// BundleTicket is one ticket's verification key and what the gate shows.
type BundleTicket struct {
	ID         int64  `json:"id"`
	Generation int    `json:"generation"`
	Key        []byte `json:"key"` // Ed25519 public key
	Seat       string `json:"seat"`
	Name       string `json:"name"`
	Void       string `json:"void,omitempty"`
	// Used is when it was admitted, if it was before the download.
	Used *time.Time `json:"used,omitempty"`
}

// Bundle builds an event's scan bundle; the caller checked Staff.
func (s *Service) Bundle(ctx context.Context, event int64) (Bundle, error) {
	b := Bundle{Event: event, GeneratedAt: s.Now().UTC(), StepSeconds: int(Step / time.Second), Tolerance: Tolerance, Tickets: []BundleTicket{}}
	pool, err := s.shards.ForEvent(ctx, event)
	if err != nil {
		return b, err
	}
	if err := s.keyTickets(ctx, pool, `t.event_id = $1`, event); err != nil {
		return b, err
	}
	st, err := settings(ctx, pool, event)
	if err != nil {
		return b, err
	}
	b.DoorsOpenAt, b.StaticCodes = st.DoorsOpenAt, st.StaticCodes
	rows, err := pool.Query(ctx, `
		SELECT k.ticket_id, k.generation, k.key_id, `+seatLabel+`, k.holder_name, o.status, c.scanned_at
		FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id `+itemJoin+`
		LEFT JOIN checkins c ON c.ticket_id = k.ticket_id
		WHERE k.event_id = $1 ORDER BY k.ticket_id`, event)
	if err != nil {
		return b, err
	}
	var t BundleTicket
	var keyID, status string
	_, err = pgx.ForEachRow(rows, []any{&t.ID, &t.Generation, &keyID, &t.Seat, &t.Name, &status, &t.Used}, func() error {
		pub, ok := s.ring.Public(TicketKey{Ticket: t.ID, Generation: t.Generation, KeyID: keyID})
		if !ok {
			return nil // keyed under a retired key: its codes verify nowhere
		}
		bt := t
		bt.Key = pub
		if status != "paid" {
			bt.Void = "order " + status
		}
		b.Tickets = append(b.Tickets, bt)
		return nil
	})
	return b, err
}

// A ticket's seat: the seat's label, or for a standing place the pool's
// name (the item's label counts all places of the item).
const (
	itemJoin  = `JOIN order_items i ON i.id = t.order_item_id LEFT JOIN ga_pools gp ON gp.id = i.pool_id`
	seatLabel = `coalesce(gp.name, i.label)`
)

// settings reads an event's entry rules (defaults when never set).
func settings(ctx context.Context, pool *pgxpool.Pool, event int64) (Settings, error) {
	st := defaults
	err := pool.QueryRow(ctx, `SELECT doors_open_at, static_codes, transfers_allowed, max_transfers
		FROM entry_settings WHERE event_id = $1`, event).Scan(&st.DoorsOpenAt, &st.StaticCodes, &st.TransfersAllowed, &st.MaxTransfers)
	if errors.Is(err, pgx.ErrNoRows) {
		return defaults, nil
	}
	return st, err
}
