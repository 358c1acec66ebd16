package searchindex_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/searchindex"
	"github.com/catraca/catraca/shared/searchindex/snapstore"
)

// countingDB counts the rows the catalog's reader sends.
type countingDB struct {
	db   searchindex.Querier
	rows atomic.Int64
}

func (c *countingDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rs, err := c.db.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return countingRows{Rows: rs, n: &c.rows}, nil
}

// QueryRow reads one row, counted.
func (c *countingDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c.rows.Add(1)
	return c.db.QueryRow(ctx, sql, args...)
}

type countingRows struct {
	pgx.Rows
	n *atomic.Int64
}

func (r countingRows) Next() bool {
	ok := r.Rows.Next()
	if ok {
		r.n.Add(1)
	}
	return ok
}

// seed inserts n events in one statement.
func (c catalogDB) seed(t *testing.T, n int) {
	l := c.venues[0]
	_, err := c.pool.Exec(context.Background(), `INSERT INTO events (venue_id, layout_version, shard_id, name, category, city, description,
		starts_at, sale_starts_at, sale_ends_at, status)
		SELECT $1, $2, 1, 'Festival de Jazz ' || i, 'music', 'Recife', 'ao vivo', now() + i * interval '1 hour', now() - interval '1 hour',
		now() + interval '30 days', 'on_sale' FROM generate_series(1, $3) AS i`, l.VenueID, l.Version, n)
	require.NoError(t, err)
}

// TestScaleOutReadsTheCatalogOnce is an on-sale's scale-out: 1,000 API
// instances start cold and each gets a search. Without a snapshot each
// loads the whole catalog from the reader; with one, the catalog is read
// once by the builder and each instance reads only what changed since.
func TestScaleOutReadsTheCatalogOnce(t *testing.T) {
	ctx := context.Background()
	c := newCatalog(t)
	const events, instances = 1000, 1000
	c.seed(t, events)
	db := &countingDB{db: c.pool}
	cold := func(opt searchindex.Options) *searchindex.Index {
		x := searchindex.New(db, opt)
		require.NoError(t, x.Refresh(ctx))
		require.True(t, x.Ready())
		return x
	}
	query := searchindex.Query{Text: "jazz 77", Limit: 100}

	start := time.Now()
	var want []int64
	for i := range instances {
		x := cold(searchindex.Options{})
		if i == 0 {
			want, _ = x.Search(query)
		}
	}
	before, beforeTook := db.rows.Swap(0), time.Since(start)
	require.NotEmpty(t, want)

	store := snapstore.Dir(t.TempDir())
	start = time.Now()
	n, err := searchindex.New(db, searchindex.Options{}).BuildSnapshot(ctx, store)
	require.NoError(t, err)
	require.Equal(t, events, n)
	built := db.rows.Swap(0)
	// An event changes after the snapshot: instances read it from the catalog.
	_, err = c.pool.Exec(ctx, `UPDATE events SET name = 'Jazz 77 Special', updated_at = now() WHERE id = (SELECT min(id) FROM events)`)
	require.NoError(t, err)
	for range instances {
		// The seed is seconds old: the 5 s overlap would re-read every
		// event's id and stamp, which a catalog in use does not have.
		x := cold(searchindex.Options{Snapshots: store, Overlap: time.Microsecond})
		got, ok := x.Search(query)
		require.True(t, ok)
		require.Len(t, got, len(want)+1, "the changed event is found too")
	}
	after, afterTook := db.rows.Load(), time.Since(start)

	t.Logf("%d events, %d cold instances: catalog rows read without a snapshot %d (%d per instance, %s); "+
		"with one: %d to build it once + %d by the instances (%.1f per instance, %s): %.0fx fewer",
		events, instances, before, before/instances, beforeTook.Round(time.Millisecond),
		built, after, float64(after)/instances, afterTook.Round(time.Millisecond), float64(before)/float64(built+after))
	require.Less(t, built+after, before/50, "scale-out reads the catalog about once, not once per instance")
}

// TestSnapshotFallsBackToTheCatalog: no snapshot, a stale one or one
// that cannot be decoded, and the instance reads the catalog as before.
func TestSnapshotFallsBackToTheCatalog(t *testing.T) {
	ctx := context.Background()
	c := newCatalog(t)
	c.seed(t, 50)
	db := &countingDB{db: c.pool}
	store := snapstore.Dir(t.TempDir())
	load := func(now time.Time) int64 {
		db.rows.Store(0)
		x := searchindex.New(db, searchindex.Options{Snapshots: store, Now: func() time.Time { return now }, Overlap: time.Microsecond})
		require.NoError(t, x.Refresh(ctx))
		got, ok := x.Search(searchindex.Query{Text: "jazz", Limit: 100})
		require.True(t, ok)
		require.Len(t, got, 50, "every event")
		return db.rows.Load()
	}
	full := load(time.Now())
	require.Greater(t, full, int64(50), "no snapshot: the catalog")
	_, err := searchindex.New(db, searchindex.Options{}).BuildSnapshot(ctx, store)
	require.NoError(t, err)
	require.Less(t, load(time.Now()), int64(10), "a fresh snapshot")
	require.Equal(t, full, load(time.Now().Add(31*time.Minute)), "a snapshot older than MaxSnapshotAge: the catalog")
	require.NoError(t, store.Save(ctx, []byte("not a snapshot")))
	require.Equal(t, full, load(time.Now()), "an undecodable snapshot: the catalog")
}
