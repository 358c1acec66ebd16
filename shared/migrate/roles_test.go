package migrate_test

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/testenv"
)

// as connects to dsn as role.
func as(t *testing.T, dsn, role string) *pgx.Conn {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(role)
	conn, err := pgx.Connect(context.Background(), u.String())
	require.NoError(t, err, "log in as %s", role)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestFunctionRolesHaveOnlyTheirGrants: the migrations create a role for
// every function but migrate (config.DBRoles), and each may do what its
// code does and no more: only the API reads password hashes, no function
// writes shard_meta or deletes payments, only the API takes holds.
func TestFunctionRolesHaveOnlyTheirGrants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := testenv.NewDatabases(t, 1)
	catalog, shard := d.DSN(d.Catalog), d.DSN(d.Shards[1])

	owner := as(t, catalog, "postgres")
	rows, err := owner.Query(ctx, `SELECT rolname FROM pg_roles WHERE rolname LIKE 'catraca\_%' AND rolcanlogin ORDER BY 1`)
	require.NoError(t, err)
	roles, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Subset(t, roles, slices.Collect(maps.Values(config.DBRoles())), "a login role per function")

	denied := func(dsn, role, sql string) {
		t.Helper()
		tx, err := as(t, dsn, role).Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, sql)
		require.ErrorContains(t, err, "permission denied", "%s: %s", role, sql)
	}
	allowed := func(dsn, role, sql string) {
		t.Helper()
		tx, err := as(t, dsn, role).Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, sql)
		require.NoError(t, err, "%s: %s", role, sql)
	}

	allowed(catalog, "catraca_api", `SELECT password_hash FROM accounts`)
	for _, fn := range []string{"fulfil", "pspwebhook", "pspqueue", "reconcile"} {
		allowed(catalog, config.DBRole(fn), `SELECT id, email FROM accounts`)
		denied(catalog, config.DBRole(fn), `SELECT password_hash FROM accounts`)
	}
	denied(catalog, "catraca_sweep", `SELECT email FROM accounts`)
	// A draw the sweep runs queues its mail; fulfil sends it, reading the
	// outcome and the address but never a presale's seed.
	allowed(catalog, "catraca_sweep", `INSERT INTO outbox (topic, payload) VALUES ('presale.mail', '{}')`)
	allowed(catalog, "catraca_fulfil", `UPDATE presale_registrations SET mailed_at = now() WHERE id = 'r1' AND won AND code IS NOT NULL`)
	denied(catalog, "catraca_fulfil", `SELECT seed FROM presales`)
	denied(catalog, "catraca_admit", `UPDATE events SET name = 'x'`)
	allowed(catalog, "catraca_admit", `UPDATE events SET room_published_at = now()`)

	for _, role := range config.DBRoles() {
		denied(shard, role, `UPDATE shard_meta SET shard_id = 2`)
		denied(shard, role, `DELETE FROM payments`)
		denied(shard, role, `TRUNCATE holds`)
		denied(shard, role, `CREATE TABLE t (x INT)`)
	}
	// A door grant made again is an upsert (shardstore.GrantDoors).
	allowed(shard, "catraca_api", `INSERT INTO door_staff (event_id, account_id, email, name, granted_by) VALUES (1, 2, 'a@b', 'A', 3)
		ON CONFLICT (event_id, account_id) DO UPDATE SET event_id = excluded.event_id RETURNING id`)
	denied(shard, "catraca_api", `INSERT INTO webhook_events (psp_event_id, type) VALUES ('evt', 'x')`)
	allowed(shard, "catraca_pspwebhook", `INSERT INTO webhook_events (psp_event_id, type) VALUES ('evt', 'x')`)
	denied(shard, "catraca_sweep", `SELECT * FROM tickets`)
	denied(shard, "catraca_sweep", `SELECT hold_take_ga_one(1, 1, 1, 1, 1, 'k', 1, 1, 'k', 0, 1, 'k', ''::bytea)`)
	denied(shard, "catraca_fulfil", `SELECT within_limit('k', 1, 1, 1, 6)`)
	allowed(shard, "catraca_api", `SELECT within_limit('k', 1, 1, 1, 6)`)
}
