// Package event is the catalog's directory of events: listing, detail and
// the settings that other packages (inventory, waiting room) read.
package event

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/searchindex"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound means no such event.
var ErrNotFound = errors.New("event not found")

// ErrBadCursor means a pagination cursor was not one we issued.
var ErrBadCursor = errors.New("invalid cursor")

// Event is one entry of the directory.
type Event struct {
	ID            int64        `json:"id"`
	Name          string       `json:"name"`
	Category      string       `json:"category"`
	City          string       `json:"city"`
	Description   string       `json:"description"`
	VenueID       int64        `json:"venue_id"`
	VenueName     string       `json:"venue_name"`
	LayoutVersion int          `json:"layout_version"`
	StartsAt      time.Time    `json:"starts_at"`
	SaleStartsAt  time.Time    `json:"sale_starts_at"`
	SaleEndsAt    time.Time    `json:"sale_ends_at"`
	Status        Status       `json:"status"`
	Currency      string       `json:"currency"`
	MaxPerAccount int          `json:"max_per_account"`
	MaxPerHold    int          `json:"max_per_hold"`
	HoldTTL       int          `json:"hold_ttl_seconds"`
	HoldCap       int          `json:"-"`
	Shard         int          `json:"-"`
	WaitingRoom   WaitingRoom  `json:"waiting_room"`
	PriceLevels   []PriceLevel `json:"price_levels,omitempty"`
	// Version grows with every change organizers can see (a catalog
	// trigger bumps it); the API sends it as the event's ETag.
	Version int64 `json:"-"`
}

// Status is where an event stands in its life (events.status in the
// catalog; shardstore's states test keeps the two in step).
type Status string

// Event states.
const (
	Draft     Status = "draft" // unlisted until scheduled
	Scheduled Status = "scheduled"
	OnSale    Status = "on_sale"
	Closed    Status = "closed"
	SoldOut   Status = "sold_out"
	Cancelled Status = "cancelled" // for good: its orders are refunded
)

// WaitingRoom holds an event's queue settings.
type WaitingRoom struct {
	Enabled         bool       `json:"enabled"`
	PrequeueOpensAt *time.Time `json:"prequeue_opens_at,omitempty"`
	// PublishedAt is when the room first reached Redis (nil: never).
	PublishedAt  *time.Time `json:"-"`
	Ceiling      int        `json:"ceiling"`
	ActiveTTL    int        `json:"active_ttl_seconds"`
	AdmissionTTL int        `json:"admission_ttl_seconds"`
	// Paused stops admission (the organizer's control room); it is set
	// on its own route, never by a waiting-room settings update.
	Paused bool `json:"paused"`
}

// PriceLevel is a price an event charges for seats of a level.
type PriceLevel struct {
	Code       string `json:"code"`
	Name       string `json:"name"`
	PriceCents int    `json:"price_cents"`
	// Color is the level's colour on the seat map, #rrggbb; empty lets
	// the map choose.
	Color string `json:"color,omitempty"`
}

// ETag is the event's version as an HTTP entity tag (RFC 9110): a strong
// one, since every change bumps the version.
func (e Event) ETag() string { return `"` + strconv.FormatInt(e.Version, 10) + `"` }

// OnSale tells whether sales are open at t.
func (e Event) OnSale(t time.Time) bool {
	return (e.Status == OnSale || e.Status == Scheduled) && !t.Before(e.SaleStartsAt) && t.Before(e.SaleEndsAt)
}

// Directory reads events from the catalog.
type Directory struct {
	db    *pgxpool.Pool
	index *searchindex.Index
}

// NewDirectory returns a directory over a catalog pool (a reader is fine).
func NewDirectory(db *pgxpool.Pool) *Directory { return &Directory{db: db} }

// WithSearchIndex returns a directory that answers searches from an
// in-memory index while it is loaded and fresh, PostgreSQL otherwise
// (docs/read-path.md).
func (d *Directory) WithSearchIndex(x *searchindex.Index) *Directory {
	return &Directory{db: d.db, index: x}
}

// fromRow is the event of a catalog row.
func fromRow(r catalogstore.Event) Event {
	e := Event{ID: r.ID, Name: r.Name, Category: r.Category, City: r.City, Description: r.Description,
		VenueID: r.VenueID, VenueName: r.VenueName, LayoutVersion: r.LayoutVersion,
		StartsAt: r.StartsAt, SaleStartsAt: r.SaleStartsAt, SaleEndsAt: r.SaleEndsAt, Status: Status(r.Status),
		Currency: r.Currency, MaxPerAccount: r.MaxPerAccount, MaxPerHold: r.MaxPerHold, HoldTTL: r.HoldTTL, HoldCap: r.HoldCap,
		Shard: r.Shard, Version: r.Version,
		WaitingRoom: WaitingRoom{Enabled: r.WaitingRoom, PrequeueOpensAt: r.PrequeueOpensAt, PublishedAt: r.RoomPublishedAt,
			Ceiling: r.QueueCeiling, ActiveTTL: r.ActiveTTL, AdmissionTTL: r.AdmissionTTL, Paused: r.AdmissionPaused}}
	for _, p := range r.PriceLevels {
		e.PriceLevels = append(e.PriceLevels, PriceLevel(p))
	}
	return e
}

// fromRows is the events of catalog rows, never nil.
func fromRows(rows []catalogstore.Event, err error) ([]Event, error) {
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out := make([]Event, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

// Get returns one event with its price levels.
func (d *Directory) Get(ctx context.Context, id int64) (Event, error) { return Read(ctx, d.db, id) }

// Read returns one event with its price levels through db: a transaction
// reads it with its own locks and writes, on the connection it holds.
func Read(ctx context.Context, db catalogstore.DB, id int64) (Event, error) {
	r, found, err := catalogstore.ReadEvent(ctx, db, id)
	if err != nil {
		return Event{}, fmt.Errorf("get event %d: %w", id, err)
	}
	if !found {
		return Event{}, fmt.Errorf("event %d: %w", id, ErrNotFound)
	}
	return fromRow(r), nil
}

// Filter narrows a listing. Zero values do not filter.
type Filter struct {
	Query    string // full-text and typo-tolerant search
	City     string
	Category string
	From     time.Time
	To       time.Time
	// OnSaleNow keeps events whose sales are open at this moment.
	OnSaleNow bool
	// OpensSoon keeps events (scheduled or on sale) whose sales open
	// within searchindex.OpensSoonWithin.
	OpensSoon bool
	Cursor    string
	Limit     int
}

// Page is one page of a listing; Next is empty on the last page.
type Page struct {
	Events []Event `json:"events"`
	Next   string  `json:"next_cursor,omitempty"`
}

// List returns events ordered by start time then id (stable under
// inserts), paginated by an opaque keyset cursor. With a query, results are
// ranked by relevance instead and the cursor is an offset.
func (d *Directory) List(ctx context.Context, f Filter) (Page, error) {
	if f.Limit <= 0 || f.Limit > 100 {
		f.Limit = 20
	}
	l := catalogstore.Listing{City: f.City, Category: f.Category, From: f.From, To: f.To, OnSaleNow: f.OnSaleNow}
	if f.OpensSoon {
		l.OpensWithin = searchindex.OpensSoonWithin
	}
	query := strings.TrimSpace(f.Query)
	if query != "" {
		return d.search(ctx, f, l, query)
	}
	var after *catalogstore.Key
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return Page{}, err
		}
		after = &catalogstore.Key{StartsAt: at, ID: id}
	}
	events, err := fromRows(catalogstore.ListEvents(ctx, d.db, l, after, f.Limit+1))
	if err != nil {
		return Page{}, err
	}
	p := Page{Events: events}
	if len(events) > f.Limit {
		p.Events = events[:f.Limit]
		last := p.Events[f.Limit-1]
		p.Next = encodeCursor(last.StartsAt, last.ID)
	}
	return p, nil
}

// search ranks events whose name or category holds every typed word above
// those that match through the city, the venue or the description
// (catalogstore.SearchEvents), from the in-memory index when it is loaded.
func (d *Directory) search(ctx context.Context, f Filter, l catalogstore.Listing, query string) (Page, error) {
	// The cursor is an offset (after a mode letter older cursors carry):
	// ranked results have no stable keyset.
	offset := 0
	if f.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if err != nil || len(b) < 2 || (b[0] != 'w' && b[0] != 't') {
			return Page{}, ErrBadCursor
		}
		// An offset no page of ours reaches would overflow LIMIT below.
		if offset, err = strconv.Atoi(string(b[1:])); err != nil || offset < 0 || offset > math.MaxInt32 {
			return Page{}, ErrBadCursor
		}
	}
	if len([]rune(query)) > 200 {
		query = string([]rune(query)[:200])
	}
	if d.index != nil {
		ids, ok := d.index.Search(searchindex.Query{Text: query, City: f.City, Category: f.Category, From: f.From, To: f.To,
			OnSaleNow: f.OnSaleNow, OpensSoon: f.OpensSoon, Offset: offset, Limit: f.Limit})
		if ok {
			return d.byIDs(ctx, ids, offset, f.Limit)
		}
	}
	events, err := fromRows(catalogstore.SearchEvents(ctx, d.db, l, query, offset, f.Limit+1))
	if err != nil {
		return Page{}, err
	}
	p := Page{Events: events}
	if len(events) > f.Limit {
		p.Events = events[:f.Limit]
		p.Next = base64.RawURLEncoding.EncodeToString([]byte("w" + strconv.Itoa(offset+f.Limit)))
	}
	return p, nil
}

// byIDs reads the events the index found, in its order: one round trip
// by primary key, so the rows are as fresh as the catalog's.
func (d *Directory) byIDs(ctx context.Context, ids []int64, offset, limit int) (Page, error) {
	p := Page{Events: []Event{}}
	if len(ids) > limit {
		ids = ids[:limit]
		p.Next = base64.RawURLEncoding.EncodeToString([]byte("w" + strconv.Itoa(offset+limit)))
	}
	if len(ids) == 0 {
		return p, nil
	}
	events, err := fromRows(catalogstore.ListedEvents(ctx, d.db, ids))
	if err != nil {
		return Page{}, err
	}
	at := make(map[int64]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	sort.Slice(events, func(i, j int) bool { return at[events[i].ID] < at[events[j].ID] })
	p.Events = events
	return p, nil
}

func encodeCursor(at time.Time, id int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMicro(), 10) + "." + strconv.FormatInt(id, 10)))
}

func decodeCursor(c string) (time.Time, int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, 0, ErrBadCursor
	}
	us, idText, ok := strings.Cut(string(b), ".")
	micros, err1 := strconv.ParseInt(us, 10, 64)
	id, err2 := strconv.ParseInt(idText, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return time.Time{}, 0, ErrBadCursor
	}
	return time.UnixMicro(micros).UTC(), id, nil
}

// WaitingRoomEvents lists events whose waiting room must run around now:
// pre-queue open (or about to open) and sales not over.
func (d *Directory) WaitingRoomEvents(ctx context.Context, now time.Time) ([]Event, error) {
	return fromRows(catalogstore.WaitingRoomEvents(ctx, d.db, now))
}

// MarkRoomPublished records the first publication of an event's room.
func (d *Directory) MarkRoomPublished(ctx context.Context, id int64) error {
	return catalogstore.MarkRoomPublished(ctx, d.db, id)
}

// CancelledSince lists the events cancelled (or last changed, once
// cancelled) at or after since, oldest first: the reconciler makes sure
// each cancellation reached its shard.
func (d *Directory) CancelledSince(ctx context.Context, since time.Time) ([]Event, error) {
	return fromRows(catalogstore.CancelledSince(ctx, d.db, since))
}

// ByCreator lists the events an organizer created, drafts and cancelled
// ones included, latest start first (the organizer console's list).
func (d *Directory) ByCreator(ctx context.Context, organizer int64) ([]Event, error) {
	return fromRows(catalogstore.EventsByCreator(ctx, d.db, organizer))
}
