package shardstore

import (
	"context"
	"strconv"
)

// CardTickets takes card fingerprint's limit lock on an event until the
// transaction ends, then counts the tickets of the event's paid orders that
// a charge on that card paid, besides order besides, less those a partial
// refund gave back (void_tickets, shard 00030). Under the lock two
// payments on one card cannot both pass its limit.
func (t Tx) CardTickets(ctx context.Context, fingerprint string, eventID, besides int64) (int, error) {
	if err := t.lock(ctx, "card:"+fingerprint+":"+strconv.FormatInt(eventID, 10), false); err != nil {
		return 0, err
	}
	var n int
	err := t.tx.QueryRow(ctx, `SELECT coalesce(sum(o.ticket_count - void_tickets(o.id)), 0) FROM payments p JOIN orders o ON o.payment_id = p.id
		WHERE p.card_fingerprint = $1 AND o.event_id = $2 AND o.status = 'paid' AND o.id <> $3`, fingerprint, eventID, besides).Scan(&n)
	return n, err
}
