// Package searchindex is an in-memory full-text index of the catalog's
// events, one per API instance, that answers event search in microseconds
// with the same rules as the catalog's PostgreSQL search (search_query,
// catalog migration 5): the same lexemes (read from search_vec), the same
// vocabulary and word correction, the same order. It returns event ids;
// the caller reads those rows from the catalog, so what a fan sees of an
// event is never older than the row.
//
// The catalog is read-mostly: after one full load the index re-reads only
// the events changed since its watermark (events.updated_at, indexed), at
// most once per Interval, triggered by searches. Until it is loaded, or
// when its last refresh is older than MaxStale, Search says so and the
// caller asks PostgreSQL.
package searchindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/catalogstore"
)

// Querier reads the catalog (a pool on a reader is fine).
type Querier = catalogstore.Reader

// Options tune an Index; zero values take the defaults.
type Options struct {
	// Interval is the most often searches trigger a refresh (1 s).
	Interval time.Duration
	// MaxStale: a refresh older than this sends searches to PostgreSQL (10 s).
	MaxStale time.Duration
	// Overlap re-reads changes this far behind the watermark, for
	// transactions that commit after rows they wrote were stamped (5 s).
	Overlap time.Duration
	// MaxEvents bounds memory: a catalog larger than this is not loaded
	// and PostgreSQL keeps answering (500,000: about 190 MB at the
	// benchmark's ~0.38 KB per event, within a 512 MB API Lambda).
	MaxEvents int
	// Snapshots, when set, is where a new instance first looks for the
	// catalog (snapshot.go); nil reads the catalog.
	Snapshots SnapshotStore
	// MaxSnapshotAge: an older snapshot is ignored (30 minutes; the
	// builder writes one every 10).
	MaxSnapshotAge time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// Log receives failed refreshes (slog.Default()).
	Log *slog.Logger
}

// Index is one instance's search index. Its zero value is not usable; use New.
type Index struct {
	db  Querier
	opt Options

	refreshMu  sync.Mutex  // one refresh at a time
	refreshing atomic.Bool // a triggered refresh is under way
	tooBig     atomic.Bool // the catalog outgrew MaxEvents: never loaded

	mu        sync.RWMutex
	st        *state
	fresh     time.Time // when the last successful refresh began
	watermark time.Time // latest updated_at read
}

// New returns an index over the catalog; it loads on the first Refresh.
func New(db Querier, opt Options) *Index {
	if opt.Interval <= 0 {
		opt.Interval = time.Second
	}
	if opt.MaxStale <= 0 {
		opt.MaxStale = 10 * time.Second
	}
	if opt.Overlap <= 0 {
		opt.Overlap = 5 * time.Second
	}
	if opt.MaxEvents <= 0 {
		opt.MaxEvents = 500_000
	}
	if opt.MaxSnapshotAge <= 0 {
		opt.MaxSnapshotAge = 30 * time.Minute
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	return &Index{db: db, opt: opt}
}

// ErrTooBig means the catalog holds more events than MaxEvents.
var ErrTooBig = errors.New("searchindex: catalog larger than MaxEvents")

// Query is one search: typed text, filters and the window of results.
type Query struct {
	Text           string
	City, Category string // City is compared folded, Category exactly
	From, To       time.Time
	OnSaleNow      bool
	OpensSoon      bool // sale opens within OpensSoonWithin (scheduled or on sale)
	Offset, Limit  int
}

// OpensSoonWithin is how soon a sale opens for its event to be listed as
// opening soon (the home page shows those right after what is on sale).
const OpensSoonWithin = 7 * 24 * time.Hour

// Search returns the ids of the matching events from Offset, at most
// Limit+1 of them (one more tells there is a next page): events holding
// every word in their name or category first, then those matching through
// the city, venue or description, soonest first within each. ok is false
// when the index cannot answer (not loaded, or stale) and the caller must
// ask PostgreSQL; Search then triggers a refresh.
func (x *Index) Search(q Query) (ids []int64, ok bool) {
	now := x.opt.Now()
	x.mu.RLock()
	defer x.mu.RUnlock()
	age := now.Sub(x.fresh)
	if x.st == nil || age >= x.opt.Interval {
		x.trigger()
	}
	if x.st == nil || age > x.opt.MaxStale {
		return nil, false
	}
	return x.st.search(q, now), true
}

// trigger starts a refresh in the background unless one is under way.
func (x *Index) trigger() {
	if x.tooBig.Load() || !x.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer x.refreshing.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := x.Refresh(ctx); err != nil {
			x.opt.Log.Warn("search index refresh failed: the next search retries, PostgreSQL answers once the index is stale", "err", err)
		}
	}()
}

// Ready tells whether the index would answer a search now.
func (x *Index) Ready() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.st != nil && x.opt.Now().Sub(x.fresh) <= x.opt.MaxStale
}

// bulk is how many changed events one refresh applies in place; more and
// it reloads everything (a bulk import, a renamed venue with many events).
const bulk = 2000

// Refresh loads the catalog the first time, then applies the events
// changed since the watermark.
func (x *Index) Refresh(ctx context.Context) error {
	x.refreshMu.Lock()
	defer x.refreshMu.Unlock()
	began := x.opt.Now()
	x.mu.RLock()
	st, since := x.st, x.watermark.Add(-x.opt.Overlap)
	x.mu.RUnlock()
	if st == nil && x.opt.Snapshots != nil && x.fromSnapshot(ctx) {
		x.mu.RLock()
		st, since = x.st, x.watermark.Add(-x.opt.Overlap)
		x.mu.RUnlock()
	}
	if st == nil {
		return x.load(ctx, began)
	}
	changed, err := x.changedSince(ctx, st, since)
	if err != nil {
		return err
	}
	if len(changed) > bulk {
		return x.load(ctx, began)
	}
	var rows []row
	if len(changed) > 0 {
		if rows, err = x.read(ctx, changed); err != nil {
			return err
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range rows {
		x.st.put(r, false)
		x.advance(r.updated)
	}
	x.fresh = began
	return nil
}

// changedSince returns the events stamped after since that st does not
// hold as they are now: the overlap reads some again, and a bulk import
// would read them all again, so only ids and stamps come back first.
func (x *Index) changedSince(ctx context.Context, st *state, since time.Time) ([]int64, error) {
	var changed []int64
	err := catalogstore.EventStamps(ctx, x.db, since, func(id int64, updated time.Time) {
		x.mu.RLock()
		slot, ok := st.slots[id]
		same := ok && st.docs[slot].updated == updated.UnixMicro()
		x.mu.RUnlock()
		if !same {
			changed = append(changed, id)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("search index changes: %w", err)
	}
	return changed, nil
}

func (x *Index) advance(updated int64) {
	if t := time.UnixMicro(updated); t.After(x.watermark) {
		x.watermark = t
	}
}

// load reads every event and swaps in a new state.
func (x *Index) load(ctx context.Context, began time.Time) error {
	c, err := x.readCatalog(ctx)
	if err != nil {
		return err
	}
	if len(c.rows) > x.opt.MaxEvents {
		x.tooBig.Store(true)
		return ErrTooBig
	}
	var watermark time.Time
	for _, r := range c.rows {
		if t := time.UnixMicro(r.updated); t.After(watermark) {
			watermark = t
		}
	}
	st := x.build(c)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.st, x.fresh, x.watermark = st, began, watermark
	return nil
}

// build makes a state of a catalog read (sorting its rows).
func (x *Index) build(c catalog) *state {
	st := newState(c.fold)
	for _, w := range c.words {
		st.wordID(w, true)
	}
	rows := c.rows
	// In search order, every posting list is built by appending.
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].starts < rows[j].starts || rows[i].starts == rows[j].starts && rows[i].id < rows[j].id
	})
	for _, r := range rows {
		st.put(r, true)
	}
	st.sortWords()
	return st
}

// folder reads how the catalog folds each code point of foldRanges,
// keeping those it changes.
func (x *Index) folder(ctx context.Context) (folder, error) {
	var from, to []int32
	for _, rg := range foldRanges {
		from, to = append(from, rg[0]), append(to, rg[1])
	}
	rs, err := x.db.Query(ctx, `SELECT c, search_normalize(chr(c)) FROM unnest($1::int[], $2::int[]) AS r(a, b),
		generate_series(r.a, r.b) AS c`, from, to)
	if err != nil {
		return nil, fmt.Errorf("search index folding: %w", err)
	}
	f := folder{}
	var c int32
	var folded string
	_, err = pgx.ForEachRow(rs, []any{&c, &folded}, func() error {
		if folded != string(rune(c)) {
			f[rune(c)] = folded
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search index folding: %w", err)
	}
	return f, nil
}

// read returns events as search sees them: the lexemes of search_vec
// split by weight (parsed from its text form: unnest() per row made a
// 100,000-event load take seconds), the city, start and sale times,
// status; ids nil reads every event.
func (x *Index) read(ctx context.Context, ids []int64) ([]row, error) {
	var out []row
	err := catalogstore.SearchRows(ctx, x.db, ids, func(e catalogstore.SearchRow) (bool, error) {
		r := row{id: e.ID, listed: e.Listed, onSale: e.OnSale, opening: e.Opening, city: e.City, category: e.Category,
			starts: e.StartsAt.UnixMicro(), saleStarts: e.SaleStartsAt.UnixMicro(), saleEnds: e.SaleEndsAt.UnixMicro(), updated: e.Updated.UnixMicro()}
		var err error
		if r.name, r.other, err = lexemes(e.Vector); err != nil {
			return false, fmt.Errorf("search index read of event %d: %w", r.id, err)
		}
		out = append(out, r)
		return len(out) <= x.opt.MaxEvents, nil
	})
	if err != nil {
		return nil, fmt.Errorf("search index read: %w", err)
	}
	return out, nil
}

// search answers q over the loaded events at time now.
func (s *state) search(q Query, now time.Time) []int64 {
	terms, ok := s.parse(q.Text)
	if !ok {
		return nil
	}
	keep, ok := s.filter(q, now)
	if !ok {
		return nil
	}
	// Walk the term with the fewest postings; check the others per doc.
	drive, size := 0, -1
	for i, t := range terms {
		n := 0
		for _, l := range s.lists(t, false) {
			n += len(l)
		}
		if size < 0 || n < size {
			drive, size = i, n
		}
	}
	need := q.Offset + q.Limit + 1
	matches := func(d *doc, inName bool) bool {
		for i, t := range terms {
			if i != drive && !s.has(d, t, inName) {
				return false
			}
		}
		return true
	}
	var named []int32
	for w := s.walk(s.lists(terms[drive], true)); len(named) < need; {
		slot, more := w.next()
		if !more {
			break
		}
		if d := &s.docs[slot]; keep(d) && matches(d, true) {
			named = append(named, slot)
		}
	}
	var others []int32
	for w := s.walk(s.lists(terms[drive], false)); len(named)+len(others) < need; {
		slot, more := w.next()
		if !more {
			break
		}
		d := &s.docs[slot]
		if keep(d) && matches(d, false) && !(s.has(d, terms[drive], true) && matches(d, true)) {
			others = append(others, slot)
		}
	}
	all := append(named, others...)
	if q.Offset >= len(all) {
		return nil
	}
	all = all[q.Offset:]
	ids := make([]int64, len(all))
	for i, slot := range all {
		ids[i] = s.docs[slot].id
	}
	return ids
}

// filter compiles the listing filters; ok is false when none can match.
func (s *state) filter(q Query, now time.Time) (func(*doc) bool, bool) {
	city, category := uint32(0), uint32(0)
	var ok bool
	if q.City != "" {
		if city, ok = s.strs["city:"+s.fold.fold(q.City)]; !ok {
			return nil, false
		}
	}
	if q.Category != "" {
		if category, ok = s.strs["cat:"+q.Category]; !ok {
			return nil, false
		}
	}
	from, to, at := q.From.UnixMicro(), q.To.UnixMicro(), now.UnixMicro()
	soon := now.Add(OpensSoonWithin).UnixMicro()
	return func(d *doc) bool {
		return d.listed &&
			(q.City == "" || d.city == city) &&
			(q.Category == "" || d.category == category) &&
			(q.From.IsZero() || d.starts >= from) &&
			(q.To.IsZero() || d.starts < to) &&
			(!q.OnSaleNow || d.onSale && at >= d.saleStarts && at < d.saleEnds) &&
			(!q.OpensSoon || d.opening && d.saleStarts > at && d.saleStarts < soon)
	}, true
}
