// Package availability builds the seat-map snapshot watchers poll: one bit
// per seat (by the layout's seat index), per-section counts and GA places
// left. A snapshot is built at most about once per interval per event for
// the whole fleet (package cache) from a read replica, never from anything
// the sale path waits on, and is never invalidated on sale: it is simply
// at most one interval old.
package availability

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
)

// Interval is how old a snapshot may be.
const Interval = time.Second

// Snapshot is the compact availability of one event.
type Snapshot struct {
	EventID     int64  `json:"event_id"`
	GeneratedAt string `json:"generated_at"`
	SeatCount   int    `json:"seat_count"`
	// Available is a base64 bitset: bit i (least significant first within
	// each byte) is set when the seat with layout index i can be held.
	Available string                  `json:"available"`
	Sections  map[string]SectionCount `json:"sections"`
	GA        map[string]GACount      `json:"ga"`
	Interval  int64                   `json:"interval_ms"`
}

// SectionCount is how many seats of a section are free.
type SectionCount struct {
	Available int `json:"available"`
	Total     int `json:"total"`
}

// GACount is how many places of a pool are left.
type GACount struct {
	Remaining int `json:"remaining"`
	Capacity  int `json:"capacity"`
}

// Service serves snapshots.
type Service struct {
	shards *shardstore.Shards
	cache  *cache.Cache
}

// New returns the snapshot service.
func New(shards *shard.Router, c *cache.Cache) *Service {
	return &Service{shards: shardstore.Open(shards), cache: c}
}

// Get returns the snapshot payload (JSON) of an event on shardID and its ETag.
func (s *Service) Get(ctx context.Context, eventID int64, shardID int) ([]byte, string, error) {
	b, err := s.cache.Get(ctx, "avail:"+strconv.FormatInt(eventID, 10), Interval, func(ctx context.Context) ([]byte, error) {
		snap, err := s.Build(ctx, eventID, shardID)
		if err != nil {
			return nil, err
		}
		return json.Marshal(snap)
	})
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	return b, `"` + hex.EncodeToString(sum[:8]) + `"`, nil
}

// Build reads an event's availability from its shard's reader.
func (s *Service) Build(ctx context.Context, eventID int64, shardID int) (Snapshot, error) {
	st, err := s.shards.Reader(shardID)
	if err != nil {
		return Snapshot{}, err
	}
	snap := Snapshot{EventID: eventID, Sections: map[string]SectionCount{}, GA: map[string]GACount{}, Interval: Interval.Milliseconds()}
	var bits []byte
	now, err := st.SeatMap(ctx, eventID, func(idx int, section string, free bool) {
		for len(bits) <= idx/8 {
			bits = append(bits, 0)
		}
		c := snap.Sections[section]
		c.Total++
		if free {
			bits[idx/8] |= 1 << (idx % 8)
			c.Available++
		}
		snap.Sections[section] = c
		snap.SeatCount++
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of event %d: %w", eventID, err)
	}
	snap.GeneratedAt = now.UTC().Format(time.RFC3339Nano)
	snap.Available = base64.StdEncoding.EncodeToString(bits)
	err = st.PoolCounts(ctx, eventID, func(code string, capacity, remaining int) {
		snap.GA[code] = GACount{Remaining: remaining, Capacity: capacity}
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("snapshot of event %d: %w", eventID, err)
	}
	return snap, nil
}
