// Package catalogstore holds every SQL statement on the catalog database's
// tables (accounts, venues and their layouts, events and their price
// levels, the search words, the linked accounts of shared/fairness), as
// shared/shardstore holds every statement on a shard's. The domain
// packages call its named steps; it imports none of them and takes and
// returns plain values and rows. A step runs on what it
// is given: the catalog pool, a reader, or a transaction the caller holds
// (so a write that locks an event row reads and writes on its one
// connection). TestEveryTableHasOneOwner (tools/sessionsql) fails when
// another package sends SQL to a catalog table.
package catalogstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB is what a step runs on: *pgxpool.Pool, *pgx.Conn or pgx.Tx.
type DB interface {
	Reader
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// Reader is what a step that only reads runs on.
type Reader interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}
