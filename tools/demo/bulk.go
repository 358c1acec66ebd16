package demo

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// BulkOrders writes paid orders (each of tickets standing places) straight
// into the event's shard in one statement, bought in turn by buyers: no
// PSP, and the inventory is left as it was. A stadium's worth of orders
// takes seconds, for exports and listings at full scale. The event needs a
// standing area (a GA pool).
func BulkOrders(ctx context.Context, shard *pgxpool.Pool, event int64, buyers []int64, orders, tickets int) error {
	_, err := shard.Exec(ctx, `
WITH pool AS (
	SELECT id, name, price_level, price_cents FROM ga_pools WHERE event_id = $1 ORDER BY id LIMIT 1
), h AS (
	INSERT INTO holds (event_id, account_id, status, expires_at, idempotency_key, request_hash)
	SELECT $1, ($2::bigint[])[1 + g % cardinality($2::bigint[])], 'converted', now(), 'bulk-' || gen_random_uuid(), '\x00'
	FROM generate_series(1, $3::int) g
	RETURNING id, account_id
), o AS (
	INSERT INTO orders (event_id, user_id, hold_id, status, ticket_count, total_cents, currency, paid_at)
	SELECT $1, h.account_id, h.id, 'paid', $4, $4 * pool.price_cents, 'BRL', now() FROM h, pool
	RETURNING id
), i AS (
	INSERT INTO order_items (order_id, pool_id, quantity, label, price_level, price_cents)
	SELECT o.id, pool.id, $4, pool.name, pool.price_level, pool.price_cents FROM o, pool
	RETURNING id, order_id
)
INSERT INTO tickets (order_id, event_id, order_item_id, code)
SELECT i.order_id, $1, i.id, 'bulk-' || i.id || '-' || n FROM i, generate_series(1, $4::int) n`,
		event, buyers, orders, tickets)
	if err != nil {
		return fmt.Errorf("bulk orders for event %d: %w", event, err)
	}
	return nil
}
