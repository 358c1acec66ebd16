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
// It holds at most max entries, so requests for many ids (most of them not
// found) cannot grow it without bound.
type Cache struct {
	dir   *Directory
	ttl   time.Duration
	max   int
	group singleflight.Group
	mu    sync.Mutex
	items map[int64]cached
}

// cacheMax bounds the cache: far more events than are ever on sale at once.
const cacheMax = 10_000

type cached struct {
	e   Event
	err error
	at  time.Time
}

// NewCache wraps dir with a TTL cache.
func NewCache(dir *Directory, ttl time.Duration) *Cache {
	return &Cache{dir: dir, ttl: ttl, max: cacheMax, items: map[int64]cached{}}
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
			c.put(id, cached{e: e, err: err, at: time.Now()})
		}
		return e, err
	})
	return v.(Event), err
}

// put stores an entry. When full it drops expired entries and then, down
// to 90 % of max, arbitrary ones (map order): a full cache of fresh entries
// means an id scan, where any entry is as good as another, and freeing a
// tenth at once keeps the sweep's cost amortized.
func (c *Cache) put(id int64, it cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= c.max {
		for k, v := range c.items {
			if time.Since(v.at) >= c.ttl {
				delete(c.items, k)
			}
		}
		for k := range c.items {
			if len(c.items) < c.max*9/10 {
				break
			}
			delete(c.items, k)
		}
	}
	c.items[id] = it
}

func isNotFound(err error) bool { return err != nil && errors.Is(err, ErrNotFound) }
