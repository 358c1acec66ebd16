// Package entry is entry day: rotating ticket codes signed with per-ticket
// Ed25519 keys, the check-in that admits a ticket once however many gates
// scan it, door staff, scan bundles for offline gates and their sync, and
// ticket transfers. Its tables live on the event's shard, beside the
// tickets; the catalog is read only for account names and roles, and for
// event owners and statuses.
package entry

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
)

// Errors a client can act on.
var (
	ErrNotFound     = errors.New("ticket not found")
	ErrNotOwner     = errors.New("not the event's organizer")
	ErrNotStaff     = errors.New("not door staff of this event")
	ErrNoAccount    = errors.New("no account with that email")
	ErrNoStaff      = errors.New("no such door-staff grant")
	ErrNoTransfer   = errors.New("transfer not allowed")
	ErrBadSettings  = errors.New("invalid entry settings")
	ErrBadGate      = errors.New("gate name missing, too long or not on one line")
	ErrBadScanID    = errors.New("scan id missing or too long")
	ErrTooManyScans = errors.New("too many scans in one sync")
	// ErrCancelled refuses a change of a cancelled event's entry rules or
	// staff, as every other change of a cancelled event is refused.
	ErrCancelled = errors.New("the event is cancelled")
)

// refuseTransfer says why a ticket cannot change hands.
func refuseTransfer(why string) error {
	return reject.New(ErrNoTransfer, "", "This ticket cannot be transferred: "+why+".")
}

// Service is the entry-day logic.
type Service struct {
	catalog *pgxpool.Pool
	shards  shards
	ring    *Ring
	// Now is the clock (tests move it).
	Now  func() time.Time
	sent func(ctx context.Context, s Sent)
}

// New returns the service.
func New(catalog *pgxpool.Pool, shards *shard.Router, ring *Ring, options ...Option) *Service {
	s := &Service{catalog: catalog, shards: shardstore.Open(shards), ring: ring, Now: time.Now}
	for _, o := range options {
		o(s)
	}
	return s
}

// shards is where entry finds a shard's store (shardstore.Shards).
type shards interface {
	IDs() []int
	Primary(id int) (*shardstore.Store, error)
	OfEvent(ctx context.Context, eventID int64) (*shardstore.Store, error)
	OfRow(id int64) (*shardstore.Store, error)
}

// Option adjusts a Service.
type Option func(*Service)

// OnSent tells fn about each transfer after it commits (to mail the
// recipient).
func OnSent(fn func(ctx context.Context, s Sent)) Option { return func(s *Service) { s.sent = fn } }

var defaults = Settings{TransfersAllowed: true, MaxTransfers: 1}

// ownerOf returns the account that created the event if it is an
// organizer now (0 if it is not: a demotion takes the event's rules, staff
// and doors at the next request, as it takes the console's routes), and
// whether the event is cancelled; lock takes the event row's lock in db,
// a transaction.
func ownerOf(ctx context.Context, db catalogstore.DB, event int64, lock bool) (owner int64, cancelled bool, err error) {
	owner, cancelled, found, err := catalogstore.EventOwner(ctx, db, event, account.RoleOrganizer, lock)
	if err == nil && !found {
		return 0, false, shard.ErrUnknownEvent
	}
	return owner, cancelled, err
}

// transferTerms reads what a transfer of a ticket of event depends on in
// the catalog: whether the event is cancelled (the catalog has a cancel
// before the shard does) and its per-account limit.
func transferTerms(ctx context.Context, db catalogstore.DB, event int64) (cancelled bool, limit int, err error) {
	cancelled, limit, found, err := catalogstore.TransferTerms(ctx, db, event)
	if err == nil && !found {
		return false, 0, shard.ErrUnknownEvent
	}
	return cancelled, limit, err
}

// change runs write, a change of the event's entry rules or staff on its
// shard, if account created the event and it is not cancelled:
// ErrNotOwner for another organizer's event and for none at all alike, so
// the answer does not tell whether the event exists; ErrCancelled for the
// organizer's cancelled event. The check and the write happen under the
// catalog event row's lock, which every organizer write (a cancel too)
// takes: read then written without it, a cancel that committed in between
// let the change through. Catalog row first, then the shard, as nothing
// holds a shard lock while waiting for the catalog. The shard is found
// first: with the lock held, a second catalog connection could wait on a
// pool the lock holders have drained.
func (s *Service) change(ctx context.Context, event, account int64, write func(tx pgx.Tx, st *shardstore.Store) error) error {
	st, err := s.shards.OfEvent(ctx, event)
	if errors.Is(err, shard.ErrUnknownEvent) {
		return ErrNotOwner
	} else if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.catalog, func(tx pgx.Tx) error {
		owner, cancelled, err := ownerOf(ctx, tx, event, true)
		switch {
		case errors.Is(err, shard.ErrUnknownEvent) || err == nil && owner != account:
			return ErrNotOwner
		case err != nil:
			return err
		case cancelled:
			return reject.New(ErrCancelled, "", "A cancelled event cannot change.")
		}
		return write(tx, st)
	})
}

// requireOwner fails with ErrNotOwner unless account created the event,
// for another organizer's event and for none at all alike, so the answer
// does not tell whether the event exists.
func (s *Service) requireOwner(ctx context.Context, event, account int64) error {
	owner, _, err := ownerOf(ctx, s.catalog, event, false)
	if errors.Is(err, shard.ErrUnknownEvent) || err == nil && owner != account {
		return ErrNotOwner
	}
	return err
}

// Door is an account's right to an event's doors, as Staff found it; the
// door's steps (Check, Sync, Bundle) take the one Staff returned.
type Door struct {
	Event, Staff int64
	// Organizer: the event's organizer, who also sees its entry rules.
	Organizer bool
	// Cancelled: the catalog has the event cancelled. Its tickets admit
	// nobody from that commit on, whether or not the shard has heard of it
	// (the status copy and the refund step come after, and may fail).
	Cancelled bool
}

// order is a ticket's order status at this door: a paid order of a
// cancelled event is cancelled, as the shard's door status says once the
// cancel reached it.
func (d Door) order(status shardstore.OrderStatus) shardstore.OrderStatus {
	if d.Cancelled && status == shardstore.OrderPaid {
		return shardstore.OrderCancelled
	}
	return status
}

// Staff fails unless account may scan at the event's doors: door staff
// granted for the event, or its organizer. It is ErrNotStaff for an event
// that does not exist too, so the answer does not tell whether it exists.
func (s *Service) Staff(ctx context.Context, event, account int64) (Door, error) {
	d := Door{Event: event, Staff: account}
	owner, cancelled, err := ownerOf(ctx, s.catalog, event, false)
	if errors.Is(err, shard.ErrUnknownEvent) {
		return d, ErrNotStaff
	}
	if err != nil {
		return d, err
	}
	d.Cancelled = cancelled
	if d.Organizer = owner == account; d.Organizer {
		return d, nil
	}
	st, err := s.shards.OfEvent(ctx, event)
	if err != nil {
		return d, err
	}
	granted, err := st.IsDoorStaff(ctx, event, account)
	if err == nil && !granted {
		err = ErrNotStaff
	}
	return d, err
}

// Settings returns an event's entry rules.
func (s *Service) Settings(ctx context.Context, event int64) (Settings, error) {
	st, err := s.shards.OfEvent(ctx, event)
	if err != nil {
		return defaults, err
	}
	return settings(ctx, st, event)
}

// SetSettings replaces an event's entry rules; only its organizer may.
func (s *Service) SetSettings(ctx context.Context, event, account int64, v Settings) (Settings, error) {
	return v, s.change(ctx, event, account, func(_ pgx.Tx, st *shardstore.Store) error {
		if v.MaxTransfers < 0 || v.MaxTransfers > 100 {
			return reject.New(ErrBadSettings, "/max_transfers", "These entry rules cannot be saved: max_transfers must be between 0 and 100.")
		}
		return st.SetEntrySettings(ctx, event, v.row())
	})
}

// Grant makes the account with email door staff of the event; only its
// organizer may. The answer echoes email and tells nothing more of the
// account. Granting twice is harmless: created is false, the grant the same.
func (s *Service) Grant(ctx context.Context, event, account int64, email string) (g Grant, created bool, err error) {
	err = s.change(ctx, event, account, func(tx pgx.Tx, st *shardstore.Store) error {
		p, err := byEmail(ctx, tx, email)
		if err != nil {
			return err
		}
		row, made, err := st.GrantDoors(ctx, event, p.ID, email, p.Name, account)
		g, created = grant(row), made
		return err
	})
	g.Email = email
	return g, created, err
}

// DoorStaff lists the event's door staff for its organizer.
func (s *Service) DoorStaff(ctx context.Context, event, account int64) ([]Grant, error) {
	if err := s.requireOwner(ctx, event, account); err != nil {
		return nil, err
	}
	st, err := s.shards.OfEvent(ctx, event)
	if err != nil {
		return nil, err
	}
	rows, err := st.DoorGrants(ctx, event)
	if err != nil {
		return nil, err
	}
	grants := shardstore.Rows(rows, grant)
	var older []int64
	for _, g := range grants {
		if g.Email == "" {
			older = append(older, g.Account)
		}
	}
	if len(older) == 0 {
		return grants, nil
	}
	// Grants made before emails were kept show the account's, the address
	// the organizer typed but for its case.
	people, err := s.people(ctx, older)
	for i, g := range grants {
		if g.Email == "" {
			grants[i].Email = people[g.Account].Email
		}
	}
	return grants, err
}

// Revoke takes the event's doors back from grant id at once: the account's
// next door call is refused, a sync of scans it made offline included.
// Only the organizer may, a cancelled event's too.
func (s *Service) Revoke(ctx context.Context, event, account, id int64) error {
	if err := s.requireOwner(ctx, event, account); err != nil {
		return err
	}
	st, err := s.shards.OfEvent(ctx, event)
	if err != nil {
		return err
	}
	found, err := st.RevokeDoors(ctx, event, id)
	if err == nil && !found {
		err = ErrNoStaff
	}
	return err
}

// Person is an account as entry shows it.
type Person struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Email is the address as the account has it (found ignoring case).
	Email string `json:"-"`
}

func byEmail(ctx context.Context, db catalogstore.DB, email string) (Person, error) {
	a, found, err := catalogstore.AccountByEmail(ctx, db, email)
	if err == nil && !found {
		return Person{}, ErrNoAccount
	}
	return Person{ID: a.ID, Name: a.Name, Email: a.Email}, err
}

// people reads accounts from the catalog.
func (s *Service) people(ctx context.Context, ids []int64) (map[int64]Person, error) {
	accounts, err := catalogstore.Accounts(ctx, s.catalog, ids)
	out := make(map[int64]Person, len(accounts))
	for id, a := range accounts {
		out[id] = Person{ID: a.ID, Name: a.Name, Email: a.Email}
	}
	return out, err
}

// keyTickets gives a key row to every paid ticket in scope (of arg) that
// has none yet, held by the order's buyer. Keys are made on first need, so
// issuing tickets stays as it was.
func (s *Service) keyTickets(ctx context.Context, st *shardstore.Store, scope shardstore.KeyScope, arg int64) error {
	users, err := st.UnkeyedBuyers(ctx, scope, arg)
	if err != nil || len(users) == 0 {
		return err
	}
	people, err := s.people(ctx, users)
	if err != nil {
		return err
	}
	names := make(map[int64]string, len(people))
	for id, p := range people {
		names[id] = p.Name
	}
	return st.KeyTickets(ctx, scope, arg, s.ring.Current(), names)
}
