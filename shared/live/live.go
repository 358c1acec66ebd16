// Package live pushes seat and GA changes to watchers. Each change is
// appended to a capped Redis stream (its id is the SSE event id, so a
// reconnecting client resumes with Last-Event-ID) and published on a Redis
// channel; each API process holds one subscription per watched event and
// fans it out in memory.
package live

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/rediskey"
)

// SeatState is what a seat of a delta changed to, as the seat map shows it.
type SeatState string

// Seat states of a delta.
const (
	SeatHeld      SeatState = "held"
	SeatAvailable SeatState = "available"
	SeatSold      SeatState = "sold"
)

// Delta is one change to an event's availability.
type Delta struct {
	// Seats are layout seat indexes that changed to State.
	Seats []int     `json:"seats,omitempty"`
	State SeatState `json:"state,omitempty"`
	// GA maps a pool code to the change of places left (−2: two taken).
	GA map[string]int `json:"ga,omitempty"`
}

// Message is a delta with its stream id.
type Message struct {
	ID   string
	Data []byte
}

// keep is how many recent changes a reconnecting client can resume from.
const keep = 2000

// Hub publishes and fans out changes.
type Hub struct {
	rdb    redis.UniversalClient
	prefix string
	mu     sync.Mutex
	topics map[int64]*topic
}

type topic struct {
	subs   map[chan Message]struct{}
	cancel context.CancelFunc
}

// New returns a hub on rdb.
func New(rdb redis.UniversalClient, prefix string) *Hub {
	return &Hub{rdb: rdb, prefix: prefix, topics: map[int64]*topic{}}
}

func (h *Hub) stream(eventID int64) string {
	return rediskey.Event(h.prefix, eventID) + "changes"
}

// Publish records and broadcasts a delta.
func (h *Hub) Publish(ctx context.Context, eventID int64, d Delta) error {
	data, err := json.Marshal(d)
	if err != nil {
		return err
	}
	id, err := h.rdb.XAdd(ctx, &redis.XAddArgs{Stream: h.stream(eventID), MaxLen: keep, Approx: true,
		Values: []any{"d", data}}).Result()
	if err != nil {
		return err
	}
	return h.rdb.Publish(ctx, h.stream(eventID), id+"|"+string(data)).Err()
}

// Since returns the changes after id; ok is false when id is older than
// what is kept (the client must reload the snapshot).
func (h *Hub) Since(ctx context.Context, eventID int64, id string) ([]Message, bool, error) {
	first, err := h.rdb.XRangeN(ctx, h.stream(eventID), "-", "+", 1).Result()
	if err != nil {
		return nil, false, err
	}
	if len(first) > 0 && streamLess(id, first[0].ID) {
		return nil, false, nil
	}
	msgs, err := h.rdb.XRange(ctx, h.stream(eventID), "("+id, "+").Result()
	if err != nil {
		return nil, false, err
	}
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		data, _ := m.Values["d"].(string)
		out = append(out, Message{ID: m.ID, Data: []byte(data)})
	}
	return out, true, nil
}

// After tells whether stream id a comes after b.
func After(a, b string) bool { return streamLess(b, a) }

// streamLess compares stream ids "ms-seq".
func streamLess(a, b string) bool {
	am, as, _ := strings.Cut(a, "-")
	bm, bs, _ := strings.Cut(b, "-")
	ams, _ := strconv.ParseInt(am, 10, 64)
	bms, _ := strconv.ParseInt(bm, 10, 64)
	if ams != bms {
		return ams < bms
	}
	an, _ := strconv.ParseInt(as, 10, 64)
	bn, _ := strconv.ParseInt(bs, 10, 64)
	return an < bn
}

// Subscribe returns a channel of live changes and a function to stop. The
// subscription is confirmed by Redis before it returns, so a caller that
// then reads Since misses nothing in between. The channel is closed when
// the caller fell behind (see pump).
func (h *Hub) Subscribe(ctx context.Context, eventID int64) (<-chan Message, func(), error) {
	ch := make(chan Message, 64)
	h.mu.Lock()
	t, ok := h.topics[eventID]
	if !ok {
		ps := h.rdb.Subscribe(ctx, h.stream(eventID))
		if _, err := ps.Receive(ctx); err != nil {
			h.mu.Unlock()
			ps.Close()
			return nil, nil, err
		}
		pctx, cancel := context.WithCancel(context.Background())
		t = &topic{subs: map[chan Message]struct{}{}, cancel: cancel}
		h.topics[eventID] = t
		go h.pump(pctx, ps, t)
	}
	t.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(t.subs, ch)
		if len(t.subs) == 0 && h.topics[eventID] == t {
			t.cancel()
			delete(h.topics, eventID)
		}
	}, nil
}

// pump relays one Redis subscription to the process's watchers. A watcher
// too slow to take a message is dropped (its channel closed) rather than
// slowing the others or silently missing a change: its stream ends, and the
// browser reconnects with Last-Event-ID and gets what it missed from the
// Redis stream (or a resync).
func (h *Hub) pump(ctx context.Context, ps *redis.PubSub, t *topic) {
	go func() { <-ctx.Done(); ps.Close() }()
	for m := range ps.Channel() {
		id, data, ok := strings.Cut(m.Payload, "|")
		if !ok {
			continue
		}
		msg := Message{ID: id, Data: []byte(data)}
		h.mu.Lock()
		for ch := range t.subs {
			select {
			case ch <- msg:
			default:
				delete(t.subs, ch)
				close(ch)
			}
		}
		h.mu.Unlock()
	}
}
