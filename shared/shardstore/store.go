// Package shardstore is the only code that reads and writes an event
// shard's tables: seats, GA pools and slots, holds, orders and their items,
// payments, PSP webhook records, tickets, ticket keys and transfers, door
// staff, entry settings and check-ins, and runs the outbox's statements
// (shared/outbox) in its transactions. The domain packages
// (inventory, order, entry, organizer) keep the rules and call the named
// steps here; WithTx owns begin, commit and rollback.
package shardstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/shard"
)

// querier is a pool or a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// reads are the statements that run alike on a pool (autocommit) or
// inside a transaction.
type reads struct{ q querier }

// Store is one shard's database.
type Store struct {
	reads
	db *pgxpool.Pool
	// unnamed says the pool does not prepare its statements per connection
	// (CATRACA_DB_PROXY): the takes then call their functions (takeCalls).
	unnamed bool
}

// New returns the store of a shard's pool.
func New(db *pgxpool.Pool) *Store {
	return &Store{reads{db}, db, db.Config().ConnConfig.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement}
}

// Tx is a transaction on one shard, handed out by WithTx.
type Tx struct {
	reads
	tx pgx.Tx
}

// WithTx runs fn in one transaction: committed when fn returns nil, rolled
// back otherwise (and on panic).
func (s *Store) WithTx(ctx context.Context, fn func(tx Tx) error) error {
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error { return fn(Tx{reads{tx}, tx}) })
}

// savepoint runs fn in a nested transaction of tx: its failure or refusal
// (keep false) undoes only fn's writes.
func (t Tx) savepoint(ctx context.Context, fn func(sp Tx) (keep bool, err error)) (bool, error) {
	sp, err := t.tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer sp.Rollback(ctx)
	keep, err := fn(Tx{reads{sp}, sp})
	if err != nil || !keep {
		return false, err
	}
	return true, sp.Commit(ctx)
}

// Shards finds the store of a shard, or of a row by the shard bits of its id.
type Shards struct{ r *shard.Router }

// Open returns the stores of a router's shards.
func Open(r *shard.Router) *Shards { return &Shards{r} }

// IDs returns the shard ids in ascending order.
func (s *Shards) IDs() []int { return s.r.IDs() }

// Primary returns the writable store of shard id.
func (s *Shards) Primary(id int) (*Store, error) { return open(s.r.Pool(id)) }

// Reader returns the read replica of shard id, or its primary.
func (s *Shards) Reader(id int) (*Store, error) { return open(s.r.ReadPool(id)) }

// OfEvent returns the writable store of the shard that owns an event.
func (s *Shards) OfEvent(ctx context.Context, eventID int64) (*Store, error) {
	return open(s.r.ForEvent(ctx, eventID))
}

// OfRow returns the store that owns a hold, order, payment or ticket id.
func (s *Shards) OfRow(id int64) (*Store, error) { return open(s.r.ForRow(id)) }

func open(db *pgxpool.Pool, err error) (*Store, error) {
	if err != nil {
		return nil, err
	}
	return New(db), nil
}

// one reads a single row, telling "none" apart from an error.
func one(row pgx.Row, dest ...any) (found bool, err error) {
	err = row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}
