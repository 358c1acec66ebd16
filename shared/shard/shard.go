// Package shard routes work to the PostgreSQL database that owns an event.
// The catalog records event → shard; holds, orders and tickets carry their
// shard in the low bits of their id, so they route without a lookup.
package shard

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/catalogstore"
)

// IDBits is how many low bits of a row id name its shard (see shard_id()).
const IDBits = 10

// ErrUnknownEvent means the catalog has no such event.
var ErrUnknownEvent = errors.New("unknown event")

// ErrUnknownShard means an id points at a shard this deployment lacks.
var ErrUnknownShard = errors.New("unknown shard")

// Router holds one pool per shard (and optional reader pools).
type Router struct {
	catalog *pgxpool.Pool
	primary map[int]*pgxpool.Pool
	reader  map[int]*pgxpool.Pool
	events  sync.Map // event id → shard id; immutable once placed
}

// New returns a router over already-open pools. reader may miss ids: the
// primary then serves reads too.
func New(catalog *pgxpool.Pool, primary, reader map[int]*pgxpool.Pool) *Router {
	if reader == nil {
		reader = map[int]*pgxpool.Pool{}
	}
	return &Router{catalog: catalog, primary: primary, reader: reader}
}

// IDs returns the shard ids in ascending order.
func (r *Router) IDs() []int {
	ids := make([]int, 0, len(r.primary))
	for id := range r.primary {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Pool returns the primary pool of shard id.
func (r *Router) Pool(id int) (*pgxpool.Pool, error) {
	p, ok := r.primary[id]
	if !ok {
		return nil, fmt.Errorf("%w %d", ErrUnknownShard, id)
	}
	return p, nil
}

// ReadPool returns the reader of shard id, or its primary if it has none.
func (r *Router) ReadPool(id int) (*pgxpool.Pool, error) {
	if p, ok := r.reader[id]; ok {
		return p, nil
	}
	return r.Pool(id)
}

// EventShard returns the shard id of an event, cached after the first lookup.
func (r *Router) EventShard(ctx context.Context, eventID int64) (int, error) {
	if v, ok := r.events.Load(eventID); ok {
		return v.(int), nil
	}
	id, found, err := catalogstore.EventShard(ctx, r.catalog, eventID)
	if err != nil {
		return 0, fmt.Errorf("look up shard of event %d: %w", eventID, err)
	}
	if !found {
		return 0, fmt.Errorf("event %d: %w", eventID, ErrUnknownEvent)
	}
	r.events.Store(eventID, id)
	return id, nil
}

// ForEvent returns the primary pool that owns an event.
func (r *Router) ForEvent(ctx context.Context, eventID int64) (*pgxpool.Pool, error) {
	id, err := r.EventShard(ctx, eventID)
	if err != nil {
		return nil, err
	}
	return r.Pool(id)
}

// OfRow returns the shard encoded in a hold, order or ticket id.
func OfRow(rowID int64) int { return int(rowID & (1<<IDBits - 1)) }

// ForRow returns the primary pool that owns a hold, order or ticket id.
func (r *Router) ForRow(rowID int64) (*pgxpool.Pool, error) {
	if rowID <= 0 {
		return nil, fmt.Errorf("%w for id %d", ErrUnknownShard, rowID)
	}
	return r.Pool(OfRow(rowID))
}

// Place picks the shard for a new event: the one with the least sellable
// inventory among events that have not yet happened, so concurrent on-sales
// spread across shards; ties go to the lowest id. An organizer may pin a
// shard instead (a stadium tour can get a shard of its own).
func (r *Router) Place(ctx context.Context) (int, error) {
	load, err := catalogstore.ShardLoads(ctx, r.catalog)
	if err != nil {
		return 0, fmt.Errorf("shard load: %w", err)
	}
	ids := r.IDs()
	if len(ids) == 0 {
		return 0, errors.New("no shards configured")
	}
	best := ids[0]
	for _, id := range ids[1:] {
		if load[id] < load[best] {
			best = id
		}
	}
	return best, nil
}
