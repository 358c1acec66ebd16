package searchindex

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
)

// A snapshot is the catalog as a full load reads it (foldings, vocabulary,
// every event's search row), built once by a scheduled builder and stored
// (S3 in production, a directory locally) for new instances to start from:
// at an on-sale Lambda adds up to 1,000 API environments every 10 seconds,
// and each full load reads the whole catalog from its reader. An instance
// that loads a snapshot reads from the catalog only what changed since it
// was built.

// SnapshotStore keeps the one current snapshot.
type SnapshotStore interface {
	// Load returns the stored snapshot, ErrNoSnapshot when there is none.
	Load(ctx context.Context) ([]byte, error)
	// Save replaces the stored snapshot.
	Save(ctx context.Context, b []byte) error
	// Modified is when the stored snapshot was saved (ErrNoSnapshot).
	Modified(ctx context.Context) (time.Time, error)
}

// ErrNoSnapshot means the store holds no snapshot yet.
var ErrNoSnapshot = errors.New("searchindex: no snapshot stored")

// snapshotVersion changes with the snapshot's layout: an instance ignores
// a snapshot of another version and reads the catalog.
const snapshotVersion = 2

// snapshot is what is stored, gob-encoded and gzipped.
type snapshot struct {
	Version   int
	Built     time.Time // when the builder began reading
	Watermark time.Time // latest updated_at read
	Fold      map[rune]string
	Words     []string
	Rows      []snapshotRow
}

type snapshotRow struct {
	ID, Starts, SaleStarts, SaleEnds, Updated int64
	Listed, OnSale, Opening                   bool
	City, Category                            string
	Name, Other                               []string
}

// catalog is everything a full load reads.
type catalog struct {
	fold  folder
	words []string
	rows  []row
}

// readCatalog reads the foldings, the vocabulary and every event.
func (x *Index) readCatalog(ctx context.Context) (catalog, error) {
	f, err := x.folder(ctx)
	if err != nil {
		return catalog{}, err
	}
	words, err := catalogstore.SearchWords(ctx, x.db)
	if err != nil {
		return catalog{}, fmt.Errorf("search index vocabulary: %w", err)
	}
	rows, err := x.read(ctx, nil)
	if err != nil {
		return catalog{}, err
	}
	return catalog{fold: f, words: words, rows: rows}, nil
}

// BuildSnapshot reads the whole catalog once and saves it to the store:
// the builder's side (the scheduled sweep function in production).
func (x *Index) BuildSnapshot(ctx context.Context, store SnapshotStore) (events int, err error) {
	began := x.opt.Now()
	c, err := x.readCatalog(ctx)
	if err != nil {
		return 0, err
	}
	if len(c.rows) > x.opt.MaxEvents {
		return 0, ErrTooBig
	}
	s := snapshot{Version: snapshotVersion, Built: began, Fold: c.fold, Words: c.words, Rows: make([]snapshotRow, len(c.rows))}
	for i, r := range c.rows {
		s.Rows[i] = snapshotRow{ID: r.id, Starts: r.starts, SaleStarts: r.saleStarts, SaleEnds: r.saleEnds, Updated: r.updated,
			Listed: r.listed, OnSale: r.onSale, Opening: r.opening, City: r.city, Category: r.category, Name: r.name, Other: r.other}
		if t := time.UnixMicro(r.updated); t.After(s.Watermark) {
			s.Watermark = t
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := gob.NewEncoder(zw).Encode(&s); err != nil {
		return 0, fmt.Errorf("search snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return 0, fmt.Errorf("search snapshot: %w", err)
	}
	if err := store.Save(ctx, buf.Bytes()); err != nil {
		return 0, fmt.Errorf("search snapshot save: %w", err)
	}
	return len(c.rows), nil
}

// BuildSnapshotEvery builds a snapshot when the stored one is older than
// every (or missing): the builder runs every minute, the catalog is read
// at most once per every.
func (x *Index) BuildSnapshotEvery(ctx context.Context, store SnapshotStore, every time.Duration) (built bool, err error) {
	saved, err := store.Modified(ctx)
	if err != nil && !errors.Is(err, ErrNoSnapshot) {
		return false, err
	}
	if err == nil && x.opt.Now().Sub(saved) < every {
		return false, nil
	}
	_, err = x.BuildSnapshot(ctx, store)
	return err == nil, err
}

// fromSnapshot installs the stored snapshot as the index's state; ok is
// false (the caller reads the catalog) when there is none, it cannot be
// read, is of another version or older than MaxSnapshotAge.
func (x *Index) fromSnapshot(ctx context.Context) (ok bool) {
	b, err := x.opt.Snapshots.Load(ctx)
	if err != nil {
		if !errors.Is(err, ErrNoSnapshot) {
			x.opt.Log.Warn("search snapshot unreadable: loading the catalog", "err", err)
		}
		return false
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	var s snapshot
	if err == nil {
		err = gob.NewDecoder(zr).Decode(&s)
	}
	switch {
	case err != nil:
		x.opt.Log.Warn("search snapshot undecodable: loading the catalog", "err", err)
		return false
	case s.Version != snapshotVersion:
		return false
	case x.opt.Now().Sub(s.Built) > x.opt.MaxSnapshotAge:
		x.opt.Log.Warn("search snapshot stale: loading the catalog", "built", s.Built)
		return false
	case len(s.Rows) > x.opt.MaxEvents:
		return false
	}
	c := catalog{fold: folder(s.Fold), words: s.Words, rows: make([]row, len(s.Rows))}
	for i, r := range s.Rows {
		c.rows[i] = row{id: r.ID, starts: r.Starts, saleStarts: r.SaleStarts, saleEnds: r.SaleEnds, updated: r.Updated,
			listed: r.Listed, onSale: r.OnSale, opening: r.Opening, city: r.City, category: r.Category, name: r.Name, other: r.Other}
	}
	if c.fold == nil {
		c.fold = folder{}
	}
	st := x.build(c)
	x.mu.Lock()
	defer x.mu.Unlock()
	// Not fresh yet: the caller reads what changed since the watermark.
	x.st, x.watermark = st, s.Watermark
	return true
}
