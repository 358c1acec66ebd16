-- +goose Up
-- cluster_tickets counts the paid tickets of an event that a cluster of
-- linked accounts (docs/fairness.md) holds: what its members bought, plus
-- what was transferred to a member from outside the cluster (a transfer
-- inside it moves a ticket already counted), besides one order.
CREATE FUNCTION cluster_tickets(members BIGINT[], event BIGINT, besides BIGINT) RETURNS BIGINT
LANGUAGE sql STABLE AS $$
    SELECT (SELECT coalesce(sum(o.ticket_count), 0) FROM orders o
            WHERE o.user_id = ANY(members) AND o.event_id = event AND o.status = 'paid' AND o.id <> besides)
         + (SELECT count(*) FROM ticket_keys k JOIN tickets t ON t.id = k.ticket_id JOIN orders o ON o.id = t.order_id
            WHERE k.holder_id = ANY(members) AND k.event_id = event AND o.status = 'paid'
              AND NOT o.user_id = ANY(members) AND o.id <> besides)
$$;

-- +goose Down
DROP FUNCTION cluster_tickets(BIGINT[], BIGINT, BIGINT);
