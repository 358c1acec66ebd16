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

	"github.com/catraca/catraca/shared/searchindex"

	"github.com/jackc/pgx/v5"
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

const columns = `e.id, e.name, e.category, e.city, e.description, e.venue_id, v.name, e.layout_version,
	e.starts_at, e.sale_starts_at, e.sale_ends_at, e.status, e.currency, e.max_per_account, e.max_per_hold,
	e.hold_ttl_seconds, e.hold_cap_seconds, e.shard_id, e.waiting_room, e.prequeue_opens_at, e.queue_ceiling,
	e.active_ttl_seconds, e.admission_ttl_seconds, e.room_published_at, e.admission_paused, e.version`

func scan(row pgx.Row) (Event, error) {
	var e Event
	err := row.Scan(&e.ID, &e.Name, &e.Category, &e.City, &e.Description, &e.VenueID, &e.VenueName, &e.LayoutVersion,
		&e.StartsAt, &e.SaleStartsAt, &e.SaleEndsAt, &e.Status, &e.Currency, &e.MaxPerAccount, &e.MaxPerHold,
		&e.HoldTTL, &e.HoldCap, &e.Shard, &e.WaitingRoom.Enabled, &e.WaitingRoom.PrequeueOpensAt, &e.WaitingRoom.Ceiling,
		&e.WaitingRoom.ActiveTTL, &e.WaitingRoom.AdmissionTTL, &e.WaitingRoom.PublishedAt, &e.WaitingRoom.Paused, &e.Version)
	return e, err
}

// Get returns one event with its price levels.
func (d *Directory) Get(ctx context.Context, id int64) (Event, error) { return Read(ctx, d.db, id) }

// Read returns one event with its price levels through db: a transaction
// reads it with its own locks and writes, on the connection it holds.
func Read(ctx context.Context, db Querier, id int64) (Event, error) {
	e, err := scan(db.QueryRow(ctx, `SELECT `+columns+` FROM events e JOIN venues v ON v.id = e.venue_id WHERE e.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, fmt.Errorf("event %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Event{}, fmt.Errorf("get event %d: %w", id, err)
	}
	rows, err := db.Query(ctx, `SELECT code, name, price_cents, color FROM event_price_levels WHERE event_id = $1 ORDER BY price_cents DESC, code`, id)
	if err != nil {
		return Event{}, fmt.Errorf("price levels of event %d: %w", id, err)
	}
	e.PriceLevels, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (PriceLevel, error) {
		var p PriceLevel
		return p, r.Scan(&p.Code, &p.Name, &p.PriceCents, &p.Color)
	})
	if err != nil {
		return Event{}, fmt.Errorf("price levels of event %d: %w", id, err)
	}
	return e, nil
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
	where := []string{"e.status <> 'draft'"}
	args := &[]any{}
	arg := func(v any) string {
		*args = append(*args, v)
		return "$" + strconv.Itoa(len(*args))
	}
	if f.City != "" {
		where = append(where, "search_normalize(e.city) = search_normalize("+arg(f.City)+")")
	}
	if f.Category != "" {
		where = append(where, "e.category = "+arg(f.Category))
	}
	if !f.From.IsZero() {
		where = append(where, "e.starts_at >= "+arg(f.From))
	}
	if !f.To.IsZero() {
		where = append(where, "e.starts_at < "+arg(f.To))
	}
	if f.OnSaleNow {
		where = append(where, "e.status = 'on_sale' AND now() >= e.sale_starts_at AND now() < e.sale_ends_at")
	}
	if f.OpensSoon {
		where = append(where, "e.status IN ('scheduled', 'on_sale') AND e.sale_starts_at > now() AND e.sale_starts_at < now() + make_interval(secs => "+
			arg(searchindex.OpensSoonWithin.Seconds())+")")
	}
	query := strings.TrimSpace(f.Query)
	if query != "" {
		return d.search(ctx, f, query, where, args, arg)
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return Page{}, err
		}
		where = append(where, "(e.starts_at, e.id) > ("+arg(at)+", "+arg(id)+")")
	}
	q := `SELECT ` + columns + ` FROM events e JOIN venues v ON v.id = e.venue_id WHERE ` +
		strings.Join(where, " AND ") + ` ORDER BY e.starts_at, e.id LIMIT ` + arg(f.Limit+1)
	events, err := collect(ctx, d.db, q, *args)
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
// those that match through the city, the venue or the description, soonest
// first within each; the last word counts as a prefix and unknown words are
// corrected to the nearest known one (search_query, catalog migration 5).
// It takes two round trips on purpose: the tsqueries come first, so the
// search is planned for those very words (a frequent word walks the
// start-time index and stops at the page, a rare one reads its few rows
// through the GIN index; docs/read-path.md shows both plans).
func (d *Directory) search(ctx context.Context, f Filter, query string, where []string, args *[]any, arg func(any) string) (Page, error) {
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
	var inName, anywhere *string
	if err := d.db.QueryRow(ctx, `SELECT search_query($1, 'A')::text, search_query($1, '')::text`, query).Scan(&inName, &anywhere); err != nil {
		return Page{}, fmt.Errorf("search query: %w", err)
	}
	if anywhere == nil {
		return Page{Events: []Event{}}, nil
	}
	filters := strings.Join(where, " AND ")
	name, anyField, upTo := arg(*inName), arg(*anywhere), arg(offset+f.Limit+1)
	from := `SELECT ` + columns + ` FROM events e JOIN venues v ON v.id = e.venue_id WHERE ` + filters
	q := `(` + from + ` AND e.search_vec @@ ` + name + `::tsquery ORDER BY e.starts_at, e.id LIMIT ` + upTo + `)
		UNION ALL
		(` + from + ` AND e.search_vec @@ ` + anyField + `::tsquery AND NOT e.search_vec @@ ` + name + `::tsquery ORDER BY e.starts_at, e.id LIMIT ` + upTo + `)
		LIMIT ` + arg(f.Limit+1) + ` OFFSET ` + arg(offset)
	// Exec mode: an unnamed statement, planned with these words every time
	// (a cached generic plan would pick one index for every word).
	events, err := collect(ctx, d.db, q, append([]any{pgx.QueryExecModeExec}, *args...))
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
	events, err := collect(ctx, d.db, `SELECT `+columns+` FROM events e JOIN venues v ON v.id = e.venue_id
		WHERE e.id = ANY($1) AND e.status <> 'draft'`, []any{ids})
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

// Querier is a pool or a transaction.
type Querier interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

func collect(ctx context.Context, db Querier, q string, args []any) ([]Event, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scan(r) })
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	if events == nil {
		events = []Event{}
	}
	return events, nil
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
	rows, err := d.db.Query(ctx, `SELECT `+columns+` FROM events e JOIN venues v ON v.id = e.venue_id
		WHERE e.waiting_room AND e.status IN ('scheduled', 'on_sale', 'sold_out')
		  AND coalesce(e.prequeue_opens_at, e.sale_starts_at - interval '30 minutes') <= $1::timestamptz + interval '5 minutes'
		  AND e.sale_ends_at > $1 ORDER BY e.id`, now)
	if err != nil {
		return nil, fmt.Errorf("waiting-room events: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scan(r) })
}

// MarkRoomPublished records the first publication of an event's room.
func (d *Directory) MarkRoomPublished(ctx context.Context, id int64) error {
	_, err := d.db.Exec(ctx, `UPDATE events SET room_published_at = now() WHERE id = $1 AND room_published_at IS NULL`, id)
	return err
}

// CancelledSince lists the events cancelled (or last changed, once
// cancelled) at or after since, oldest first: the reconciler makes sure
// each cancellation reached its shard.
func (d *Directory) CancelledSince(ctx context.Context, since time.Time) ([]Event, error) {
	return collect(ctx, d.db, `SELECT `+columns+` FROM events e JOIN venues v ON v.id = e.venue_id
		WHERE e.status = 'cancelled' AND e.updated_at >= $1 ORDER BY e.updated_at, e.id LIMIT 1000`, []any{since})
}

// ByCreator lists the events an organizer created, drafts and cancelled
// ones included, latest start first (the organizer console's list).
func (d *Directory) ByCreator(ctx context.Context, organizer int64) ([]Event, error) {
	return collect(ctx, d.db, `SELECT `+columns+` FROM events e JOIN venues v ON v.id = e.venue_id
		WHERE e.created_by = $1 ORDER BY e.starts_at DESC, e.id DESC LIMIT 500`, []any{organizer})
}
