// Package cache is a read-through cache for hot read endpoints: a short
// in-process layer, then Redis shared by every API instance, and a build
// lock so a miss storm becomes one database query per interval across the
// whole fleet. TTLs are jittered so keys built together do not expire
// together.
package cache

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"
)

// Cache caches byte payloads by key.
type Cache struct {
	rdb    redis.UniversalClient
	prefix string
	group  singleflight.Group
	mu     sync.Mutex
	local  map[string]entry
	// Builds counts how many times a payload was built (database reads).
	Builds atomic.Int64
}

type entry struct {
	val []byte
	exp time.Time
}

// New returns a cache on rdb with keys under prefix.
func New(rdb redis.UniversalClient, prefix string) *Cache {
	return &Cache{rdb: rdb, prefix: prefix + "cache:", local: map[string]entry{}}
}

// wait is how long a request waits for another instance's build before it
// serves the stale copy (or builds itself).
const wait = time.Second

// Get returns the payload for key, building it with build at most about
// once per ttl across all instances. If Redis is down it still works, with
// one build per instance per ttl.
func (c *Cache) Get(ctx context.Context, key string, ttl time.Duration, build func(context.Context) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	e, ok := c.local[key]
	c.mu.Unlock()
	if ok && time.Now().Before(e.exp) {
		return e.val, nil
	}
	v, err, _ := c.group.Do(key, func() (any, error) {
		ctx := context.WithoutCancel(ctx)
		val, err := c.shared(ctx, key, ttl, build)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.local[key] = entry{val: val, exp: time.Now().Add(jitter(ttl) / 2)}
		if len(c.local) > 10000 {
			c.local = map[string]entry{key: c.local[key]}
		}
		c.mu.Unlock()
		return val, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

func (c *Cache) shared(ctx context.Context, key string, ttl time.Duration, build func(context.Context) ([]byte, error)) ([]byte, error) {
	k := c.prefix + key
	val, err := c.rdb.Get(ctx, k).Bytes()
	if err == nil {
		return val, nil
	}
	if !errors.Is(err, redis.Nil) {
		return c.build(ctx, build) // Redis down: serve from the database
	}
	got, err := c.rdb.SetNX(ctx, k+":lock", 1, 5*time.Second).Result()
	if err != nil {
		return c.build(ctx, build)
	}
	if got {
		defer c.rdb.Del(ctx, k+":lock")
		val, err := c.build(ctx, build)
		if err != nil {
			return nil, err
		}
		c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, k, val, jitter(ttl))
			p.Set(ctx, k+":stale", val, 60*ttl)
			return nil
		})
		return val, nil
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if val, err := c.rdb.Get(ctx, k).Bytes(); err == nil {
			return val, nil
		}
	}
	if val, err := c.rdb.Get(ctx, k+":stale").Bytes(); err == nil {
		return val, nil
	}
	return c.build(ctx, build)
}

func (c *Cache) build(ctx context.Context, build func(context.Context) ([]byte, error)) ([]byte, error) {
	c.Builds.Add(1)
	return build(ctx)
}

// jitter spreads ttl by up to +25%.
func jitter(ttl time.Duration) time.Duration {
	return ttl + time.Duration(rand.Int64N(int64(ttl)/4+1))
}
