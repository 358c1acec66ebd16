package event

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/tools/testenv"
)

// An id scan (every id a 404) must not grow the cache past its bound.
func TestCacheIsBounded(t *testing.T) {
	t.Parallel()
	d := testenv.NewDatabases(t, 1)
	db, err := pgxpool.New(context.Background(), d.DSN(d.Catalog))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	c := NewCache(NewDirectory(db), time.Hour)
	c.max = 50
	for id := int64(1); id <= 500; id++ {
		if _, err := c.Get(context.Background(), id); !isNotFound(err) {
			t.Fatalf("event %d: want not found, got %v", id, err)
		}
		c.mu.Lock()
		n := len(c.items)
		c.mu.Unlock()
		if n > c.max {
			t.Fatalf("after %d ids the cache holds %d entries, more than its bound %d", id, n, c.max)
		}
	}
}
