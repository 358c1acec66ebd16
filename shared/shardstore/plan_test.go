package shardstore

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestLimitCheckReadsTheBuyersOrders: the limit checks' generic plans
// (the shard caches one per connection, planned when the connection is
// warmed, often on a shard with few orders) find the buyer's orders through
// orders_user. Planned on a fresh shard, the limit check used to walk
// orders_event instead, every order of the event filtered by buyer, so each
// hold of an on-sale cost more than the one before. The holds' check runs
// inside within_limit(); auto_explain shows the plans of the statements
// inside it as notices.
func TestLimitCheckReadsTheBuyersOrders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, notices := genericPlans(t)
	_, err := conn.Exec(ctx, `LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
		SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice`)
	require.NoError(t, err)
	h := NewHold{EventID: 1, Account: 7, TTL: 60, Key: "k", Hash: []byte{1}, Currency: "BRL", MaxPerAccount: 4}
	seats := TakenSeats(h.EventID, []int64{1})
	steps := map[string]step{
		"seats":   takeSeats(h, []int64{1, 2}),
		"ga":      takeGAFast(h, Pool{ID: 1, Slots: 4}, 1),
		"ordered": {seats.order, takeArgs(h, seats.args, seats.want, int64(0))},
		"payment": {ticketsKept, []any{h.Account, h.EventID, int64(0)}},
	}
	for _, fill := range []string{"empty", "one event's orders, analyzed"} {
		if fill != "empty" {
			_, err := conn.Exec(ctx, `WITH h AS (
					INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
					SELECT 1, g, now() + interval '1 minute', 'fill', '\x00' FROM generate_series(1, 3000) g RETURNING id, account_id)
				INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency) SELECT 1, account_id, id, 1, 100, 'BRL' FROM h`)
			require.NoError(t, err)
			_, err = conn.Exec(ctx, `ANALYZE holds, orders`)
			require.NoError(t, err)
		}
		for name, s := range steps {
			*notices = nil
			tx, err := conn.Begin(ctx)
			require.NoError(t, err)
			if rows, err := tx.Query(ctx, s.sql, s.args...); err == nil {
				rows.Close() // the takes fail: there are no seats or pools
			}
			require.NoError(t, tx.Rollback(ctx))
			var plans []string
			for _, n := range *notices {
				if strings.Contains(n, "FROM orders o JOIN holds h") {
					plans = append(plans, n)
				}
			}
			require.Len(t, plans, 1, "%s, %s: one limit check\n%s", fill, name, strings.Join(*notices, "\n"))
			require.Contains(t, plans[0], "orders_user", "%s, %s: the limit check looks the buyer up\n%s", fill, name, plans[0])
			require.NotContains(t, plans[0], "orders_event", "%s, %s: not every order of the event\n%s", fill, name, plans[0])
		}
	}
}

// genericPlans connects to a fresh shard with the shards' plan cache mode
// (one generic plan per statement and connection); notices collects the
// connection's notices.
func genericPlans(t *testing.T) (conn *pgx.Conn, notices *[]string) {
	t.Helper()
	ctx := context.Background()
	dbs := testenv.NewDatabases(t, 1)
	cfg, err := pgx.ParseConfig(dbs.DSN(dbs.Shards[1]))
	require.NoError(t, err)
	notices = new([]string)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { *notices = append(*notices, n.Message) }
	conn, err = pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	_, err = conn.Exec(ctx, `SET plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	return conn, notices
}

// explain prepares s and returns its generic plan, the arguments written
// as literals (EXPLAIN takes no parameters).
func explain(t *testing.T, conn *pgx.Conn, s step) string {
	t.Helper()
	ctx := context.Background()
	_, err := conn.Prepare(ctx, "p", s.sql)
	require.NoError(t, err)
	defer conn.Deallocate(ctx, "p")
	lits := make([]string, len(s.args))
	for i, a := range s.args {
		switch v := a.(type) {
		case int:
			lits[i] = strconv.Itoa(v)
		case int64:
			lits[i] = strconv.FormatInt(v, 10)
		case string:
			lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case []byte:
			lits[i] = `'\x` + hex.EncodeToString(v) + `'`
		case []int64:
			lits[i] = "'{" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ","), "[]") + "}'"
		default:
			t.Fatalf("no literal for %T", a)
		}
	}
	rows, err := conn.Query(ctx, `EXPLAIN EXECUTE p(`+strings.Join(lits, ", ")+`)`, pgx.QueryExecModeSimpleProtocol)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

// TestSeatTakeUpdatesInIDOrder: a seat hold's UPDATE must reach its seats
// in ascending id order (a nested loop over the sorted ids), the order every
// path that locks several seats uses; a plan that found them any other way
// (a bitmap scan visits row versions in physical order, which differs
// between snapshots) would let two holds of the same seats deadlock. The
// generic and the custom plans are checked on an empty shard and on one
// with 50,000 seats.
func TestSeatTakeUpdatesInIDOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, _ := genericPlans(t)
	h := NewHold{EventID: 1, Account: 7, TTL: 60, Key: "k", Hash: []byte{1}, Currency: "BRL", MaxPerAccount: 4}
	for _, fill := range []string{"empty", "50,000 seats, analyzed"} {
		if fill != "empty" {
			_, err := conn.Exec(ctx, `INSERT INTO event_seats (event_id, seat_id, seat_index, section_code, section_rank, row_label, row_rank, seat_number, price_level, price_cents)
				SELECT 1, g, g, 'A', 1, (g / 50)::text, g / 50, g % 50, 'P1', 100 FROM generate_series(1, 50000) g;
				ANALYZE event_seats`)
			require.NoError(t, err)
		}
		// The shards plan generically; a pooler or driver mode that plans
		// each call with its values must find the same shape.
		for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
			_, err := conn.Exec(ctx, `SET plan_cache_mode = `+mode)
			require.NoError(t, err)
			for _, seats := range [][]int64{{1}, {1, 2}, {1, 2, 3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}} {
				plan := explain(t, conn, takeSeats(h, seats))
				update := plan[strings.Index(plan, "CTE src"):]
				update = update[:strings.Index(update, "CTE o")]
				loop, sorted, bySeat := strings.Index(update, "Nested Loop"), strings.Index(update, "Sort Key: event_seats.id"),
					strings.Index(update, "Index Scan using event_seats_pkey on event_seats s")
				require.True(t, loop >= 0 && loop < sorted && sorted < bySeat, "%s, %s, %d seats: the UPDATE walks the sorted ids\n%s", fill, mode, len(seats), update)
				require.NotRegexp(t, "Hash|Merge|Bitmap Heap Scan on event_seats s", update, "%s, %s, %d seats", fill, mode, len(seats))
			}
		}
	}
}

// TestReleaseFindsPlacesThroughTheHolds: giving back the GA places of ended
// holds finds their order items through the holds' orders (one index probe
// each), not by reading every order or item of the shard.
func TestReleaseFindsPlacesThroughTheHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, _ := genericPlans(t)
	_, err := conn.Exec(ctx, `WITH h AS (
			INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
			SELECT 1, g, now() + interval '1 minute', 'k', '\x00' FROM generate_series(1, 3000) g RETURNING id, account_id),
		o AS (INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
			SELECT 1, account_id, id, 2, 100, 'BRL' FROM h RETURNING id)
		INSERT INTO order_items (order_id, pool_id, quantity, label, price_level, price_cents, slots)
		SELECT id, 1, 2, 'Floor × 2', 'GA', 50, '{3,3}' FROM o;
		ANALYZE holds, orders, order_items`)
	require.NoError(t, err)
	plan := explain(t, conn, step{placesBack, []any{[]int64{1025, 2049}}})
	require.Contains(t, plan, "orders_hold_id_key", plan)
	require.Contains(t, plan, "order_items_order", plan)
	require.NotRegexp(t, "Seq Scan on (orders|order_items)", plan)
}
