package event

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cache keeps recently read events in memory for the sale path, so a burst
// of holds costs the catalog one read per event per TTL, not one per hold.
type Cache struct {
	dir   *Directory
	ttl   time.Duration
	group singleflight.Group
	mu    sync.Mutex
	items map[int64]cached
}

type cached struct {
	e   Event
	err error
	at  time.Time
}

// NewCache wraps dir with a TTL cache.
func NewCache(dir *Directory, ttl time.Duration) *Cache {
	return &Cache{dir: dir, ttl: ttl, items: map[int64]cached{}}
}

// Get returns the event, reading through at most once per TTL; concurrent
// misses share one query. Not-found answers are cached too.
func (c *Cache) Get(ctx context.Context, id int64) (Event, error) {
	c.mu.Lock()
	it, ok := c.items[id]
	c.mu.Unlock()
	if ok && time.Since(it.at) < c.ttl {
		return it.e, it.err
	}
	v, err, _ := c.group.Do(strconv.FormatInt(id, 10), func() (any, error) {
		e, err := c.dir.Get(context.WithoutCancel(ctx), id)
		if err == nil || isNotFound(err) {
			c.mu.Lock()
			c.items[id] = cached{e: e, err: err, at: time.Now()}
			c.mu.Unlock()
		}
		return e, err
	})
	return v.(Event), err
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, ErrNotFound) }
