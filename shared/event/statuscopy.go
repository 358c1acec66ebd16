package event

import "time"

// StatusCopy is an event's status and sale end as a change at catalog
// version Version left them, for the event's shard (Shard): the payload
// the organizer writes into the catalog's outbox and the order's outbox
// worker reads back, maybe in the next release, so its JSON names are
// fixed here and not on the shard's row (shardstore.StatusCopy, the same
// fields: a Go conversion).
type StatusCopy struct {
	EventID int64 `json:"event_id"`
	Shard   int   `json:"shard"`
	// Status is a Status, as the shard's event_status keeps it.
	Status     string    `json:"status"`
	SaleEndsAt time.Time `json:"sale_ends_at"`
	Version    int64     `json:"version"`
}

// StatusCopy is e's copy for its shard.
func (e Event) StatusCopy() StatusCopy {
	return StatusCopy{EventID: e.ID, Shard: e.Shard, Status: string(e.Status), SaleEndsAt: e.SaleEndsAt, Version: e.Version}
}
