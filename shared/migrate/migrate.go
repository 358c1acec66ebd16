// Package migrate applies catraca's versioned SQL schema, embedded in the
// binary, to a catalog or an event-shard database. The same runner serves
// make dev, the tests and the deploy-time migration Lambda.
package migrate

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Kind names a database role; each has its own migration set.
type Kind string

const (
	Catalog Kind = "catalog"
	Shard   Kind = "shard"
)

//go:embed catalog/*.sql shard/*.sql
var files embed.FS

// Result tells how many migrations a run applied.
type Result struct {
	Applied int
	Version int64
}

// Up applies every pending migration of kind to the database at dsn. For a
// shard, shardID is recorded so row ids can carry it. Concurrent runners
// serialize on a Postgres advisory lock.
func Up(ctx context.Context, dsn string, kind Kind, shardID int) (Result, error) {
	if kind == Shard && (shardID < 1 || shardID > 1023) {
		return Result{}, fmt.Errorf("migrate shard: shard id %d out of range 1..1023", shardID)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: open: %w", kind, err)
	}
	defer db.Close()
	res, err := up(ctx, db, kind)
	if err != nil {
		return res, err
	}
	if kind == Shard {
		var recorded int
		err := db.QueryRowContext(ctx, `
			INSERT INTO shard_meta (shard_id) VALUES ($1)
			ON CONFLICT (only_row) DO UPDATE SET shard_id = shard_meta.shard_id
			RETURNING shard_id`, shardID).Scan(&recorded)
		if err != nil {
			return res, fmt.Errorf("migrate shard %d: record shard id: %w", shardID, err)
		}
		if recorded != shardID {
			return res, fmt.Errorf("migrate shard: database already belongs to shard %d, not %d", recorded, shardID)
		}
		// Row-id defaults call shard_id() on every insert; as a constant
		// it is folded into plans instead of reading shard_meta each time.
		if _, err := db.ExecContext(ctx, fmt.Sprintf(
			`CREATE OR REPLACE FUNCTION shard_id() RETURNS INT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT %d $$`, shardID)); err != nil {
			return res, fmt.Errorf("migrate shard %d: pin shard id: %w", shardID, err)
		}
		// The hold path's statements are the same thousands of times a
		// second: re-planning them per execution (PostgreSQL's default for
		// the first executions and whenever a custom plan looks cheaper)
		// cost about half a hold's CPU. Set on the database, not the
		// session, so RDS Proxy has no session state to pin.
		if _, err := db.ExecContext(ctx, `DO $$ BEGIN
			EXECUTE format('ALTER DATABASE %I SET plan_cache_mode = force_generic_plan', current_database());
			END $$`); err != nil {
			return res, fmt.Errorf("migrate shard %d: plan cache mode: %w", shardID, err)
		}
	}
	return res, nil
}

// Apply applies pending migrations without recording a shard id; it is for
// template databases that are cloned and then passed to Up.
func Apply(ctx context.Context, dsn string, kind Kind) (Result, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: open: %w", kind, err)
	}
	defer db.Close()
	return up(ctx, db, kind)
}

func up(ctx context.Context, db *sql.DB, kind Kind) (Result, error) {
	sub, err := fs.Sub(files, string(kind))
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: %w", kind, err)
	}
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: locker: %w", kind, err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: provider: %w", kind, err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: up: %w", kind, err)
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("migrate %s: version: %w", kind, err)
	}
	return Result{Applied: len(results), Version: v}, nil
}

// Fingerprint identifies the embedded migration set of kind, so callers can
// cache a migrated template database and notice when migrations change.
func Fingerprint(kind Kind) (string, error) {
	h := fnv.New64a()
	err := fs.WalkDir(files, string(kind), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		h.Write([]byte(path))
		h.Write(b)
		return nil
	})
	return fmt.Sprintf("%x", h.Sum64()), err
}
