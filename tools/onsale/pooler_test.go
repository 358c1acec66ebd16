package onsale

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
)

// TestOnSaleThroughTransactionPooler runs a short on-sale with every
// database reached through PgBouncer in transaction pooling mode and
// CATRACA_DB_PROXY on, as the functions reach RDS Proxy: the API's holds,
// checkouts and reads, the PSP's webhooks, the sweeper and fulfilment.
// The pooler gives each database a few server connections for many
// clients, so a named prepared statement made on one server connection and
// used on another fails the sale; afterwards no server connection may
// hold a named prepared statement, a session setting, a listened channel,
// a session advisory lock or a temporary table (state that would leak into
// the next client of that connection).
func TestOnSaleThroughTransactionPooler(t *testing.T) {
	d := testenv.NewDatabases(t, 2)
	e := testenv.Env(t)
	cfg := testenv.Proxied(t, testenv.Config(t, d))
	cfg.PSPRate = 100
	Tune(&cfg)
	st, err := stack.Start(context.Background(), cfg, stack.Options{AdmitInterval: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	dbs := append([]string{d.Catalog}, d.Shards[1], d.Shards[2])
	peak := &poolPeak{}
	rep, err := Run(context.Background(), st, e, Options{
		Fans: 200, Seats: 60, GA: 20, Ceiling: 30, Workers: 24, PSPRate: 100, DeclineRate: 0.1, AbandonRate: 0.1,
		HoldTTL: 10, ActiveTTL: 30, Deadline: 3 * time.Minute,
		Progress: func(s Sample) {
			peak.sample(t, e, dbs)
			t.Logf("t=%3.0fs waiting %d active %d admitted %d sold %d errors %d", s.T, s.Waiting, s.Active, s.Admitted, s.Sold, s.Errors)
		}})
	require.NoError(t, err)
	t.Log("\n" + rep.Markdown())
	require.Empty(t, rep.Violations)
	require.Positive(t, rep.Sold)
	require.Zero(t, rep.Errors, "requests failed through the pooler: %v", rep.ErrorKinds)
	t.Logf("pooler peak: %d client connections on %d server connections; pools (database, user): %d", peak.clients, peak.servers, len(peak.pools))
	// A pool is a database and a user, as RDS Proxy's connections belong
	// to the user they logged in as: each function has its own role.
	require.LessOrEqual(t, peak.servers, localenv.DefaultPoolSize*len(peak.pools))
	require.Greater(t, peak.clients, peak.servers, "clients shared the server connections")
	require.Empty(t, sessionLeftovers(t, e, dbs))
}

// poolPeak is the most client and server connections the pooler held at
// once for the test's databases, sampled once a second.
type poolPeak struct {
	mu               sync.Mutex
	clients, servers int
	pools            map[string]bool // database/user
}

func (p *poolPeak) sample(t *testing.T, e localenv.Env, dbs []string) {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(e.PoolerDSN("pgbouncer"))
	require.NoError(t, err)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // the admin console speaks no other
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SHOW POOLS")
	require.NoError(t, err)
	pools, err := pgx.CollectRows(rows, pgx.RowToMap)
	require.NoError(t, err)
	clients, servers := 0, 0
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pools == nil {
		p.pools = map[string]bool{}
	}
	for _, pool := range pools {
		for _, db := range dbs {
			if pool["database"] != db {
				continue
			}
			p.pools[fmt.Sprint(db, "/", pool["user"])] = true
			for _, k := range []string{"cl_active", "cl_waiting"} {
				clients += toInt(pool[k])
			}
			for _, k := range []string{"sv_active", "sv_idle", "sv_used", "sv_tested", "sv_login"} {
				servers += toInt(pool[k])
			}
		}
	}
	p.clients, p.servers = max(p.clients, clients), max(p.servers, servers)
}

// toInt reads a SHOW POOLS counter (an int32 today; read through its text
// so that another integer type in a later PgBouncer reads the same).
func toInt(v any) int {
	n, _ := strconv.Atoi(fmt.Sprint(v))
	return n
}

// sessionLeftovers lists the session state the pooled server connections
// of dbs still hold after the sale. It opens as many transactions through
// the pooler at once as a database has server connections, so that each
// runs on a server connection of its own, and asks each for what a client
// left in its session: named prepared statements, settings changed with
// SET (not LOCAL), notification channels listened to; and, per database,
// advisory locks held outside a transaction (pg_advisory_lock, not
// pg_advisory_xact_lock) and temporary tables.
func sessionLeftovers(t *testing.T, e localenv.Env, dbs []string) []string {
	ctx := context.Background()
	var out []string
	for _, db := range dbs {
		conn, err := pgx.Connect(ctx, e.DSN(db))
		require.NoError(t, err)
		var locks, temps int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND a.datname = current_database() AND a.state = 'idle'`).Scan(&locks))
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relpersistence = 't'`).Scan(&temps))
		conn.Close(ctx)
		if locks > 0 {
			out = append(out, db+": session advisory locks held by idle server connections")
		}
		if temps > 0 {
			out = append(out, db+": temporary tables left in server sessions")
		}
		out = append(out, serverSessions(t, e, db)...)
	}
	return out
}

// serverSessions asks every pooled server connection of db, each in a
// transaction of its own held open until all have answered, for what
// earlier clients left in its session. PgBouncer itself sets the
// parameters it keeps in step with each client (the list below) with
// SET: those are not ours.
func serverSessions(t *testing.T, e localenv.Env, db string) []string {
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(e.PoolerDSN(db))
	require.NoError(t, err)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // leaves nothing behind itself
	var out []string
	seen := map[int]bool{}
	for range localenv.DefaultPoolSize {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		require.NoError(t, err)
		defer conn.Close(ctx)
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		var pid, prepared, channels int
		var settings string
		require.NoError(t, tx.QueryRow(ctx, `SELECT pg_backend_pid(), (SELECT count(*) FROM pg_prepared_statements),
			(SELECT count(*) FROM pg_listening_channels()),
			(SELECT coalesce(string_agg(name, ', '), '') FROM pg_settings WHERE source = 'session'
			   AND name NOT IN ('client_encoding', 'DateStyle', 'TimeZone', 'standard_conforming_strings', 'application_name'))`).
			Scan(&pid, &prepared, &channels, &settings))
		require.False(t, seen[pid], "each transaction runs on a server connection of its own")
		seen[pid] = true
		if prepared > 0 {
			out = append(out, fmt.Sprintf("%s: %d named prepared statements on server connection %d", db, prepared, pid))
		}
		if channels > 0 {
			out = append(out, fmt.Sprintf("%s: server connection %d listens to %d channels", db, pid, channels))
		}
		if settings != "" {
			out = append(out, fmt.Sprintf("%s: server connection %d has session settings %s", db, pid, settings))
		}
	}
	return out
}
