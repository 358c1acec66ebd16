-- +goose Up
-- The one-statement takes (shardstore's seatTake, gaTakeOne, gaTakeMany) as
-- PL/pgSQL functions, for the app behind a transaction-pooling proxy
-- (CATRACA_DB_PROXY): its statements are unnamed, so PostgreSQL parses and
-- plans every one on every execution, and a take is one statement of over
-- 30 plan nodes; PL/pgSQL keeps each function's plans per session, so each
-- of the proxy's pooled server connections plans a take once
-- (docs/database.md). The bodies are the app's statements verbatim
-- (TestTakeFunctionsAreTheTakes compares them).
-- +goose StatementBegin
CREATE FUNCTION hold_take_ga_many(BIGINT, INT, INT, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA)
RETURNS TABLE (hold_id BIGINT, expires_at TIMESTAMPTZ, order_id BIGINT, total_cents BIGINT, seat_id BIGINT,
    seat_index INT, pool_code TEXT, quantity INT, label TEXT, price_level TEXT, price_cents INT)
LANGUAGE plpgsql VOLATILE AS $take$
#variable_conflict use_column
BEGIN
    RETURN QUERY WITH h AS (INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
	SELECT $4, $5, now() + make_interval(secs => $11), $12, $13
	FROM (SELECT pg_advisory_xact_lock(hashtextextended($9, 0))) AS serialized
	RETURNING id, expires_at), lim AS (SELECT within_limit($9, $5, $4, $7, $8, $10) AS ok FROM h),
		c1 AS (SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND slot >= $3 AND remaining >= $2
			ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED),
		c2 AS (SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND slot < $3 AND remaining >= $2
			ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED),
		c AS (SELECT slot FROM c1 UNION ALL SELECT slot FROM c2 LIMIT 1),
		u AS (UPDATE ga_slots g SET remaining = g.remaining - $2 FROM c
		      WHERE g.pool_id = $1 AND g.slot = c.slot AND g.remaining >= $2 RETURNING g.slot),
		src AS (SELECT h.id AS hold_id, h.expires_at, NULL::bigint AS event_seat_id, p.id AS pool_id, 0::bigint AS seat_id, NULL::int AS seat_index, p.code AS pool_code,
		$2::int AS quantity, p.name || ' × ' || $2::int AS label, p.price_level, p.price_cents,
		array_fill(u.slot, ARRAY[$2::int]) AS slots
			FROM h, ga_pools p, u WHERE p.id = $1),
		o AS (
			INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
			SELECT $4, $5, (SELECT id FROM h), sum(quantity), sum(quantity::bigint * price_cents), $6 FROM src
			HAVING (SELECT ok FROM lim) AND CASE WHEN coalesce(sum(quantity), 0) = $7 THEN true
				ELSE ensure(false, 'CT003', 'no slot with enough places') END
			RETURNING id, total_cents
		), ins AS (
			INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots)
			SELECT o.id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots FROM src, o
		)
		SELECT src.hold_id, src.expires_at, o.id, o.total_cents, src.seat_id, src.seat_index, src.pool_code, src.quantity, src.label, src.price_level, src.price_cents
		FROM o, src;
END
$take$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION hold_take_ga_one(BIGINT, INT, INT, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA)
RETURNS TABLE (hold_id BIGINT, expires_at TIMESTAMPTZ, order_id BIGINT, total_cents BIGINT, seat_id BIGINT,
    seat_index INT, pool_code TEXT, quantity INT, label TEXT, price_level TEXT, price_cents INT)
LANGUAGE plpgsql VOLATILE AS $take$
#variable_conflict use_column
BEGIN
    RETURN QUERY WITH h AS (INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
	SELECT $4, $5, now() + make_interval(secs => $11), $12, $13
	FROM (SELECT pg_advisory_xact_lock(hashtextextended($9, 0))) AS serialized
	RETURNING id, expires_at), lim AS (SELECT within_limit($9, $5, $4, $7, $8, $10) AS ok FROM h),
		c AS (SELECT slot FROM ga_slots WHERE (SELECT ok FROM lim) AND pool_id = $1 AND remaining >= $2 AND $3::int = 0),
		u AS (UPDATE ga_slots g SET remaining = g.remaining - $2 FROM c
		      WHERE g.pool_id = $1 AND g.slot = c.slot AND g.remaining >= $2 RETURNING g.slot),
		src AS (SELECT h.id AS hold_id, h.expires_at, NULL::bigint AS event_seat_id, p.id AS pool_id, 0::bigint AS seat_id, NULL::int AS seat_index, p.code AS pool_code,
		$2::int AS quantity, p.name || ' × ' || $2::int AS label, p.price_level, p.price_cents,
		array_fill(u.slot, ARRAY[$2::int]) AS slots
			FROM h, ga_pools p, u WHERE p.id = $1),
		o AS (
			INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
			SELECT $4, $5, (SELECT id FROM h), sum(quantity), sum(quantity::bigint * price_cents), $6 FROM src
			HAVING (SELECT ok FROM lim) AND CASE WHEN coalesce(sum(quantity), 0) = $7 THEN true
				ELSE ensure(false, 'CT003', 'no slot with enough places') END
			RETURNING id, total_cents
		), ins AS (
			INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots)
			SELECT o.id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots FROM src, o
		)
		SELECT src.hold_id, src.expires_at, o.id, o.total_cents, src.seat_id, src.seat_index, src.pool_code, src.quantity, src.label, src.price_level, src.price_cents
		FROM o, src;
END
$take$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION hold_take_seats(BIGINT, BIGINT[], DOUBLE PRECISION, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA)
RETURNS TABLE (hold_id BIGINT, expires_at TIMESTAMPTZ, order_id BIGINT, total_cents BIGINT, seat_id BIGINT,
    seat_index INT, pool_code TEXT, quantity INT, label TEXT, price_level TEXT, price_cents INT)
LANGUAGE plpgsql VOLATILE AS $take$
#variable_conflict use_column
BEGIN
    RETURN QUERY WITH h AS (INSERT INTO holds (event_id, account_id, expires_at, idempotency_key, request_hash)
	SELECT $4, $5, now() + make_interval(secs => $11), $12, $13
	FROM (SELECT pg_advisory_xact_lock(hashtextextended($9, 0))) AS serialized
	RETURNING id, expires_at), lim AS (SELECT within_limit($9, $5, $4, $7, $8, $10) AS ok FROM h),
		src AS (
			UPDATE event_seats s SET status = 'held', hold_id = (SELECT id FROM h),
				held_until = now() + make_interval(secs => $3), updated_at = now()
			FROM (SELECT id FROM event_seats WHERE (SELECT ok FROM lim) AND event_id = $1 AND seat_id = ANY($2) ORDER BY id) target
			WHERE s.id = target.id AND (s.status = 'available' OR (s.status = 'held' AND s.held_until < now()))
			RETURNING s.hold_id, s.held_until AS expires_at, s.id AS event_seat_id, NULL::bigint AS pool_id, s.seat_id, s.seat_index, '' AS pool_code, 1 AS quantity,
		'Section ' || s.section_code || ' · Row ' || s.row_label || ' · Seat ' || s.seat_number AS label,
		s.price_level, s.price_cents, NULL::int[] AS slots
		),
		o AS (
			INSERT INTO orders (event_id, user_id, hold_id, ticket_count, total_cents, currency)
			SELECT $4, $5, (SELECT id FROM h), sum(quantity), sum(quantity::bigint * price_cents), $6 FROM src
			HAVING (SELECT ok FROM lim) AND CASE WHEN coalesce(sum(quantity), 0) = $7 THEN true
				ELSE ensure(false, 'CT001', 'seats taken') END
			RETURNING id, total_cents
		), ins AS (
			INSERT INTO order_items (order_id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots)
			SELECT o.id, event_seat_id, pool_id, quantity, label, price_level, price_cents, slots FROM src, o
		)
		SELECT src.hold_id, src.expires_at, o.id, o.total_cents, src.seat_id, src.seat_index, src.pool_code, src.quantity, src.label, src.price_level, src.price_cents
		FROM o, src;
END
$take$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION hold_take_ga_many(BIGINT, INT, INT, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA);
DROP FUNCTION hold_take_ga_one(BIGINT, INT, INT, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA);
DROP FUNCTION hold_take_seats(BIGINT, BIGINT[], DOUBLE PRECISION, BIGINT, BIGINT, TEXT, INT, INT, TEXT, BIGINT, DOUBLE PRECISION, TEXT, BYTEA);
