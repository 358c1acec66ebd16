package gateway

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Cache behaves like a CloudFront cache for one behavior set: it stores
// responses whose Cache-Control allows a shared cache, within the
// behavior's TTL bounds, and collapses concurrent misses on one key into a
// single origin request.
type Cache struct {
	mu    sync.Mutex
	items map[string]*entry
	group singleflight.Group
	now   func() time.Time
	// Max bounds the number of entries; expired ones are dropped first.
	Max int
}

type entry struct {
	status  int
	header  http.Header
	body    []byte
	stored  time.Time
	expires time.Time
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{items: map[string]*entry{}, now: time.Now, Max: 10_000}
}

// Serve answers r from the cache under key, or from origin on a miss.
func (c *Cache) Serve(w http.ResponseWriter, r *http.Request, key string, minTTL, maxTTL, defTTL time.Duration, origin http.Handler) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.items[key]
	c.mu.Unlock()
	state := "Hit"
	if !ok || !now.Before(e.expires) {
		state = "Miss"
		filled := false
		v, _, _ := c.group.Do(key, func() (any, error) {
			filled = true
			return c.fill(r, key, minTTL, maxTTL, defTTL, origin), nil
		})
		if !filled {
			state = "Hit" // collapsed onto another viewer's origin request
		}
		e = v.(*entry)
	}
	for k, vs := range e.header {
		w.Header()[k] = vs
	}
	w.Header().Set("X-Cache", state+" from cloudfront")
	if state == "Hit" {
		w.Header().Set("Age", strconv.Itoa(int(now.Sub(e.stored).Seconds())))
	}
	w.WriteHeader(e.status)
	if r.Method != http.MethodHead {
		w.Write(e.body)
	}
}

func (c *Cache) fill(r *http.Request, key string, minTTL, maxTTL, defTTL time.Duration, origin http.Handler) *entry {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	origin.ServeHTTP(rec, r)
	now := c.now()
	e := &entry{status: rec.status, header: rec.header, body: rec.body.Bytes(), stored: now}
	ttl, ok := ttlOf(rec.header.Get("Cache-Control"), minTTL, maxTTL, defTTL)
	if !ok || !cacheableStatus(rec.status) {
		return e
	}
	e.expires = now.Add(ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= c.Max {
		for k, old := range c.items {
			if !now.Before(old.expires) {
				delete(c.items, k)
			}
		}
	}
	if len(c.items) < c.Max {
		c.items[key] = e
	}
	return e
}

// ttlOf reads Cache-Control as CloudFront does: no-store, no-cache and
// private keep a response out of the cache (unless MinTTL forces one);
// s-maxage wins over max-age; the result is clamped to the behavior.
func ttlOf(cc string, minTTL, maxTTL, defTTL time.Duration) (time.Duration, bool) {
	ttl, set := defTTL, false
	for _, d := range strings.Split(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(strings.ToLower(d)), "=")
		switch name {
		case "no-store", "no-cache", "private":
			if minTTL == 0 {
				return 0, false
			}
		case "s-maxage":
			if n, err := strconv.Atoi(val); err == nil {
				ttl, set = time.Duration(n)*time.Second, true
			}
		case "max-age":
			if n, err := strconv.Atoi(val); err == nil && !set {
				ttl = time.Duration(n) * time.Second
			}
		}
	}
	ttl = min(max(ttl, minTTL), maxTTL)
	return ttl, ttl > 0
}

func cacheableStatus(s int) bool {
	switch s {
	case 200, 203, 300, 301, 404, 410:
		return true
	}
	return false
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(s int) {
	if !r.wrote {
		r.status, r.wrote = s, true
	}
}
