package shardstore

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// ClusterTickets takes a cluster of linked accounts' limit lock on an event
// until the transaction ends, then counts the paid tickets of the event
// its members hold (cluster_tickets, shard 00026), besides order besides.
// Under the lock two members' payments cannot both take the cluster's last
// place.
func (t Tx) ClusterTickets(ctx context.Context, cluster int64, members []int64, eventID, besides int64) (int, error) {
	if err := t.lock(ctx, "cluster:"+strconv.FormatInt(cluster, 10)+":"+strconv.FormatInt(eventID, 10), false); err != nil {
		return 0, err
	}
	var n int
	err := t.tx.QueryRow(ctx, `SELECT cluster_tickets($1, $2, $3)`, members, eventID, besides).Scan(&n)
	return n, err
}

// EventBuyer is how many paid tickets of an event an account bought (less
// those refunded since).
type EventBuyer struct {
	Account int64
	EventID int64
	Tickets int
	Orders  []int64
}

// EventBuyers lists the buyers of events' paid orders with their tickets
// and orders, per event (the organizer's view of linked accounts).
func (r reads) EventBuyers(ctx context.Context, events []int64) ([]EventBuyer, error) {
	rows, _ := r.q.Query(ctx, `SELECT user_id, event_id, sum(ticket_count - void_tickets(id))::int, array_agg(id ORDER BY id) FROM orders
		WHERE event_id = ANY($1) AND status = 'paid' GROUP BY user_id, event_id ORDER BY user_id, event_id`, events)
	return pgx.CollectRows(rows, pgx.RowToStructByPos[EventBuyer])
}
