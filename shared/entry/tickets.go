package entry

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/catraca/catraca/shared/shardstore"
)

// Ahead is how many steps of codes past the current one the fan's page
// gets, so the live ticket keeps rotating through a minute without signal.
const Ahead = 4

// TicketStatus is where a ticket stands, as its page shows it.
type TicketStatus string

// Ticket states.
const (
	TicketValid TicketStatus = "valid" // admits its holder
	TicketUsed  TicketStatus = "used"  // admitted once already
	TicketVoid  TicketStatus = "void"  // its order is not paid (refunded, or its event cancelled)
)

// Ticket is a fan's ticket as the ticket page shows it.
type Ticket struct {
	ID        int64        `json:"id"`
	EventID   int64        `json:"event_id"`
	EventName string       `json:"event_name"`
	StartsAt  time.Time    `json:"starts_at"`
	Seat      string       `json:"seat"`
	Holder    string       `json:"holder"`
	Status    TicketStatus `json:"status"`
	// Refunded says a void ticket's price went back to its buyer (its
	// order, or this ticket alone, was refunded).
	Refunded    bool       `json:"refunded,omitempty"`
	CheckedInAt *time.Time `json:"checked_in_at,omitempty"`
	// LiveFrom is when the list starts to carry a valid ticket's codes:
	// before it the page asks for them when the fan opens the ticket.
	LiveFrom    time.Time   `json:"live_from"`
	DoorsOpenAt *time.Time  `json:"doors_open_at,omitempty"`
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

// Ticket returns one ticket the account holds with its codes (when it is
// valid), whatever its event's time; ErrNotFound when it holds no such
// ticket, whether or not the ticket exists.
func (s *Service) Ticket(ctx context.Context, account, ticket int64) (Ticket, error) {
	st, err := s.shards.OfRow(ticket)
	if err != nil {
		return Ticket{}, ErrNotFound
	}
	if err := s.keyed(ctx, st, account); err != nil {
		return Ticket{}, err
	}
	h, found, err := st.HeldTicket(ctx, account, ticket, defaults.row())
	if err != nil || !found {
		return Ticket{}, cmp.Or(err, ErrNotFound)
	}
	ev, err := s.eventInfo(ctx, []int64{h.EventID})
	if err != nil {
		return Ticket{}, err
	}
	return s.show(h, ev[h.EventID], s.Now(), true)
}

// keyed readies the account's tickets on st before they are read: keys
// for tickets bought and never shown, and tickets keyed under a retired
// ring key moved to the current one.
func (s *Service) keyed(ctx context.Context, st *shardstore.Store, account int64) error {
	if err := s.keyTickets(ctx, st, shardstore.BuyerTickets, account); err != nil {
		return err
	}
	ring := make([]string, 0, len(s.ring.keys))
	for _, k := range s.ring.keys {
		ring = append(ring, k.ID)
	}
	return st.Rekey(ctx, account, s.ring.Current(), ring)
}

// show is a held ticket as its page shows it: valid ones with their codes
// for now and the next Ahead steps when codes is true.
func (s *Service) show(h shardstore.HeldTicket, ev eventInfo, now time.Time, codes bool) (Ticket, error) {
	t := Ticket{ID: h.ID, EventID: h.EventID, EventName: ev.name, StartsAt: ev.startsAt, Seat: h.Seat, Holder: h.Holder,
		Status: TicketValid, CheckedInAt: h.CheckedInAt, LiveFrom: liveFrom(ev.startsAt, h.Rules.DoorsOpenAt), DoorsOpenAt: h.Rules.DoorsOpenAt}
	switch {
	case h.OrderStatus != shardstore.OrderPaid:
		t.Status = TicketVoid
		t.Refunded = h.OrderStatus == shardstore.OrderRefunded || h.OrderStatus == shardstore.OrderRefundPending
	case h.CheckedInAt != nil:
		t.Status = TicketUsed
	}
	if t.Status != TicketValid {
		return t, nil
	}
	if h.Rules.TransfersAllowed {
		t.TransfersLeft = max(0, h.Rules.MaxTransfers-h.Transfers)
	}
	if !codes {
		return t, nil
	}
	k := TicketKey{Ticket: h.ID, Generation: h.Generation, KeyID: h.KeyID}
	for step := StepAt(now); step <= StepAt(now)+Ahead; step++ {
		code, err := s.ring.Rotating(k, step)
		if err != nil {
			return t, err
		}
		from := time.Unix(step*int64(Step/time.Second), 0).UTC()
		t.Codes = append(t.Codes, TimedCode{From: from, Until: from.Add(Step), Code: code})
	}
	if h.Rules.StaticCodes {
		var err error
		if t.Static, err = s.ring.Static(k); err != nil {
			return t, err
		}
	}
	return t, nil
}

// Sent tells a transfer's recipient what they got.
type Sent struct {
	Ticket     int64
	Generation int
	Seat       string
	From       string // the sender's name
	FromID     int64  // the sender's account
	To         Person
}

// Transfer hands a ticket to the account with email: the ticket gets a new
// key generation, so every code of the old holder is void at once. The
// ticket is checked before the email is looked up, so only the holder of a
// ticket that may be sent learns whether an email has an account (and
// sends the ticket when it has).
func (s *Service) Transfer(ctx context.Context, ticket, from int64, email string) error {
	st, err := s.shards.OfRow(ticket)
	if err != nil {
		return ErrNotFound
	}
	if err := s.keyTickets(ctx, st, shardstore.BuyerTickets, from); err != nil {
		return err
	}
	sent := Sent{Ticket: ticket, FromID: from}
	err = st.WithTx(ctx, func(tx shardstore.Tx) error {
		m, found, err := tx.LockTicket(ctx, ticket, defaults.row())
		if err != nil {
			return err
		}
		if !found || m.Holder != from {
			return ErrNotFound
		}
		// The catalog has a cancel before the shard does (its status copy
		// and refund step come after, and may fail).
		cancelled, limit, err := transferTerms(ctx, s.catalog, m.EventID)
		if err != nil {
			return err
		}
		order := Door{Cancelled: cancelled}.order(m.OrderStatus)
		sent.From, sent.Seat = m.HolderName, m.Seat
		switch {
		case order != shardstore.OrderPaid:
			return refuseTransfer(fmt.Sprintf("the ticket is void (order %s)", order))
		case m.Used:
			return refuseTransfer("the ticket was already used at the door")
		case !m.Allowed:
			return refuseTransfer("the organizer does not allow transfers for this event")
		case m.Transfers >= m.Limit:
			return refuseTransfer(fmt.Sprintf("this ticket was already transferred the %d time(s) the organizer allows", m.Limit))
		}
		if sent.To, err = byEmail(ctx, s.catalog, email); err != nil {
			return err
		}
		if sent.To.ID == from {
			return refuseTransfer("the ticket is already yours")
		}
		// A ticket transferred in counts against the recipient's limit as
		// a purchase does, under the lock the recipient's holds take.
		if err := tx.LockAccount(ctx, sent.To.ID, m.EventID); err != nil {
			return err
		}
		has, err := tx.TicketsKept(ctx, sent.To.ID, m.EventID, 0)
		if err != nil {
			return err
		}
		if has+1 > limit {
			return refuseTransfer(fmt.Sprintf("the recipient would have more than the %d tickets one fan may have for this event", limit))
		}
		sent.Generation, err = tx.MoveTicket(ctx, ticket, from, sent.To.ID, sent.To.Name, s.ring.Current())
		return err
	})
	if err == nil && s.sent != nil {
		s.sent(ctx, sent)
	}
	return err
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

// Bundle builds the scan bundle of d's event: a cancelled event's tickets
// are all void in it.
func (s *Service) Bundle(ctx context.Context, d Door) (Bundle, error) {
	event := d.Event
	b := Bundle{Event: event, GeneratedAt: s.Now().UTC(), StepSeconds: int(Step / time.Second), Tolerance: Tolerance, Tickets: []BundleTicket{}}
	st, err := s.shards.OfEvent(ctx, event)
	if err != nil {
		return b, err
	}
	if err := s.keyTickets(ctx, st, shardstore.EventTickets, event); err != nil {
		return b, err
	}
	rules, err := settings(ctx, st, event)
	if err != nil {
		return b, err
	}
	b.DoorsOpenAt, b.StaticCodes = rules.DoorsOpenAt, rules.StaticCodes
	tickets, err := st.BundleTickets(ctx, event)
	if err != nil {
		return b, err
	}
	for _, t := range tickets {
		pub, ok := s.ring.Public(TicketKey{Ticket: t.ID, Generation: t.Generation, KeyID: t.KeyID})
		if !ok {
			continue // keyed under a retired key: its codes verify nowhere
		}
		bt := BundleTicket{ID: t.ID, Generation: t.Generation, Key: pub, Seat: t.Seat, Name: t.Name, Used: t.Used}
		if order := d.order(t.OrderStatus); order != shardstore.OrderPaid {
			bt.Void = "order " + string(order)
		}
		b.Tickets = append(b.Tickets, bt)
	}
	return b, nil
}

// settingsReader is a store or a transaction.
type settingsReader interface {
	EntrySettings(ctx context.Context, eventID int64) (shardstore.EntrySettings, bool, error)
}

// settings reads an event's entry rules (defaults when never set).
func settings(ctx context.Context, r settingsReader, event int64) (Settings, error) {
	st, found, err := r.EntrySettings(ctx, event)
	if err != nil || !found {
		return defaults, err
	}
	return settingsOf(st), nil
}
