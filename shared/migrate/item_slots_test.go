package migrate_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestItemSlotsMoveHoldGA: migration 00009 moves what hold_ga recorded
// onto the GA order items, one slot per place, and its down migration
// gives hold_ga back the same rows.
func TestItemSlotsMoveHoldGA(t *testing.T) {
	t.Parallel()
	e := testenv.Env(t)
	ctx := context.Background()
	name := "t_migrate_item_slots"
	require.NoError(t, e.DropDatabase(ctx, name))
	require.NoError(t, e.CreateDatabase(ctx, name, ""))
	t.Cleanup(func() { e.DropDatabase(ctx, name) })
	db, err := sql.Open("pgx", e.DSN(name))
	require.NoError(t, err)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("shard"), goose.WithDisableGlobalRegistry(true))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 8)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `
		INSERT INTO shard_meta (shard_id) VALUES (1);
		INSERT INTO holds (id, event_id, account_id, expires_at, idempotency_key, request_hash) VALUES (1025, 1, 1, now(), 'k', '\x00');
		INSERT INTO orders (id, event_id, user_id, hold_id, ticket_count, total_cents, currency) VALUES (2049, 1, 1, 1025, 4, 0, 'BRL');
		INSERT INTO order_items (order_id, event_seat_id, quantity, label, price_level, price_cents) VALUES (2049, 9, 1, 'Seat', 'P1', 0);
		INSERT INTO order_items (order_id, pool_id, quantity, label, price_level, price_cents) VALUES (2049, 7, 3, 'Floor × 3', 'GA', 0);
		INSERT INTO hold_ga (hold_id, pool_id, slot, quantity) VALUES (1025, 7, 5, 1), (1025, 7, 2, 2);`)
	require.NoError(t, err)

	_, err = p.UpTo(ctx, 9)
	require.NoError(t, err)
	var seat, ga sql.NullString
	require.NoError(t, db.QueryRowContext(ctx, `SELECT
		(SELECT slots::text FROM order_items WHERE event_seat_id IS NOT NULL),
		(SELECT slots::text FROM order_items WHERE pool_id IS NOT NULL)`).Scan(&seat, &ga))
	require.False(t, seat.Valid, "a seat item has no slots")
	require.Equal(t, "{2,2,5}", ga.String, "one slot per place")
	_, err = db.ExecContext(ctx, `UPDATE order_items SET slots = '{2}' WHERE pool_id IS NOT NULL`)
	require.ErrorContains(t, err, "check", "an item has one slot per place")

	_, err = p.DownTo(ctx, 8)
	require.NoError(t, err)
	var back string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT string_agg(hold_id || ':' || pool_id || ':' || slot || ':' || quantity, ' ' ORDER BY slot) FROM hold_ga`).Scan(&back))
	require.Equal(t, "1025:7:2:2 1025:7:5:1", back)
}
