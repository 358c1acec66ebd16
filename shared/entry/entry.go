// Package entry is entry day: rotating ticket codes signed with per-ticket
// Ed25519 keys, the check-in that admits a ticket once however many gates
// scan it, door staff, scan bundles for offline gates and their sync, and
// ticket transfers. Its tables live on the event's shard, beside the
// tickets; the catalog is read only for account names and event owners.
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

// Errors a client can act on.
var (
	ErrNotFound     = errors.New("ticket not found")
	ErrNotOwner     = errors.New("not the event's organizer")
	ErrNotStaff     = errors.New("not door staff of this event")
	ErrNoAccount    = errors.New("no account with that email")
	ErrNoTransfer   = errors.New("transfer not allowed")
	ErrBadSettings  = errors.New("invalid entry settings")
	ErrBadGate      = errors.New("gate name missing or too long")
	ErrBadScanID    = errors.New("scan id missing or too long")
	ErrTooManyScans = errors.New("too many scans in one sync")
)

// Service is the entry-day logic.
type Service struct {
	catalog *pgxpool.Pool
	shards  *shard.Router
	ring    *Ring
	// Now is the clock (tests move it).
	Now func() time.Time
	// Sent, if set, is told about each transfer after it commits (to mail
	// the recipient).
	Sent func(ctx context.Context, s Sent)
}

// New returns the service.
func New(catalog *pgxpool.Pool, shards *shard.Router, ring *Ring) *Service {
	return &Service{catalog: catalog, shards: shards, ring: ring, Now: time.Now}
}

// Settings are an event's entry rules.
type Settings struct {
	// DoorsOpenAt: scans before it answer "not valid yet" (nil: any time).
	DoorsOpenAt *time.Time `json:"doors_open_at"`
	// StaticCodes lets fans print a code that does not rotate.
	StaticCodes      bool `json:"static_codes"`
	TransfersAllowed bool `json:"transfers_allowed"`
	MaxTransfers     int  `json:"max_transfers"`
}

var defaults = Settings{TransfersAllowed: true, MaxTransfers: 1}

// ownerOf returns the organizer account that created the event.
func (s *Service) ownerOf(ctx context.Context, event int64) (int64, error) {
	var owner *int64
	err := s.catalog.QueryRow(ctx, `SELECT created_by FROM events WHERE id = $1`, event).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, shard.ErrUnknownEvent
	}
	if err != nil || owner == nil {
		return 0, err
	}
	return *owner, nil
}

// requireOwner fails unless account created the event.
func (s *Service) requireOwner(ctx context.Context, event, account int64) error {
	owner, err := s.ownerOf(ctx, event)
	if err != nil {
		return err
	}
	if owner != account {
		return ErrNotOwner
	}
	return nil
}

// Staff fails unless account may scan at the event's doors: door staff
// granted for the event, or its organizer (organizer is then true).
func (s *Service) Staff(ctx context.Context, event, account int64) (organizer bool, err error) {
	owner, err := s.ownerOf(ctx, event)
	if err != nil || owner == account {
		return err == nil, err
	}
	pool, err := s.shards.ForEvent(ctx, event)
	if err != nil {
		return false, err
	}
	var granted bool
	err = pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM door_staff WHERE event_id = $1 AND account_id = $2)`, event, account).Scan(&granted)
	if err == nil && !granted {
		err = ErrNotStaff
	}
	return false, err
}

// Settings returns an event's entry rules.
func (s *Service) Settings(ctx context.Context, event int64) (Settings, error) {
	pool, err := s.shards.ForEvent(ctx, event)
	if err != nil {
		return defaults, err
	}
	return settings(ctx, pool, event)
}

// SetSettings replaces an event's entry rules; only its organizer may.
func (s *Service) SetSettings(ctx context.Context, event, account int64, v Settings) (Settings, error) {
	if err := s.requireOwner(ctx, event, account); err != nil {
		return v, err
	}
	if v.MaxTransfers < 0 || v.MaxTransfers > 100 {
		return v, fmt.Errorf("%w: max_transfers must be between 0 and 100", ErrBadSettings)
	}
	pool, err := s.shards.ForEvent(ctx, event)
	if err != nil {
		return v, err
	}
	_, err = pool.Exec(ctx, `
		INSERT INTO entry_settings (event_id, doors_open_at, static_codes, transfers_allowed, max_transfers)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (event_id) DO UPDATE SET doors_open_at = $2, static_codes = $3, transfers_allowed = $4,
			max_transfers = $5, updated_at = now()`, event, v.DoorsOpenAt, v.StaticCodes, v.TransfersAllowed, v.MaxTransfers)
	return v, err
}

// Grant makes the account with email door staff of the event; only its
// organizer may. Granting twice is harmless.
func (s *Service) Grant(ctx context.Context, event, account int64, email string) (Person, error) {
	if err := s.requireOwner(ctx, event, account); err != nil {
		return Person{}, err
	}
	p, err := s.byEmail(ctx, email)
	if err != nil {
		return p, err
	}
	pool, err := s.shards.ForEvent(ctx, event)
	if err != nil {
		return p, err
	}
	_, err = pool.Exec(ctx, `INSERT INTO door_staff (event_id, account_id, name, granted_by) VALUES ($1, $2, $3, $4)
		ON CONFLICT DO NOTHING`, event, p.ID, p.Name, account)
	return p, err
}

// Person is an account as entry shows it.
type Person struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

func (s *Service) byEmail(ctx context.Context, email string) (Person, error) {
	var p Person
	err := s.catalog.QueryRow(ctx, `SELECT id, name FROM accounts WHERE lower(email) = lower($1)`, email).Scan(&p.ID, &p.Name)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, ErrNoAccount
	}
	return p, err
}

// names reads account names from the catalog.
func (s *Service) names(ctx context.Context, ids []int64) (map[int64]string, error) {
	rows, err := s.catalog.Query(ctx, `SELECT id, name FROM accounts WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	var id int64
	var name string
	_, err = pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		out[id] = name
		return nil
	})
	return out, err
}

// keyTickets gives a key row to every paid ticket matching where (a
// condition on tickets t and orders o, with $1 as its argument) that has
// none yet, held by the order's buyer. Keys are made on first need, so
// issuing tickets stays as it was.
func (s *Service) keyTickets(ctx context.Context, pool *pgxpool.Pool, where string, arg int64) error {
	rows, err := pool.Query(ctx, `SELECT DISTINCT o.user_id FROM tickets t JOIN orders o ON o.id = t.order_id
		LEFT JOIN ticket_keys k ON k.ticket_id = t.id
		WHERE `+where+` AND o.status = 'paid' AND k.ticket_id IS NULL`, arg)
	if err != nil {
		return err
	}
	users, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(users) == 0 {
		return err
	}
	names, err := s.names(ctx, users)
	if err != nil {
		return err
	}
	ids, vals := make([]int64, 0, len(names)), make([]string, 0, len(names))
	for id, n := range names {
		ids, vals = append(ids, id), append(vals, n)
	}
	_, err = pool.Exec(ctx, `
		INSERT INTO ticket_keys (ticket_id, event_id, key_id, holder_id, holder_name)
		SELECT t.id, t.event_id, $2, o.user_id, n.name
		FROM tickets t JOIN orders o ON o.id = t.order_id
		JOIN unnest($3::bigint[], $4::text[]) AS n (id, name) ON n.id = o.user_id
		WHERE `+where+` AND o.status = 'paid'
		ON CONFLICT (ticket_id) DO NOTHING`, arg, s.ring.Current(), ids, vals)
	return err
}
