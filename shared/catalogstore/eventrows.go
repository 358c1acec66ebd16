package catalogstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Event is a row of events with its venue's name (and, read by
// ReadEvent, its price levels).
type Event struct {
	ID              int64
	Name            string
	Category        string
	City            string
	Description     string
	VenueID         int64
	VenueName       string
	LayoutVersion   int
	StartsAt        time.Time
	SaleStartsAt    time.Time
	SaleEndsAt      time.Time
	Status          string
	Currency        string
	MaxPerAccount   int
	MaxPerHold      int
	HoldTTL         int
	HoldCap         int
	Shard           int
	WaitingRoom     bool
	PrequeueOpensAt *time.Time
	QueueCeiling    int
	ActiveTTL       int
	AdmissionTTL    int
	RoomPublishedAt *time.Time
	AdmissionPaused bool
	Version         int64
	CreatedBy       *int64 // written by InsertEvent, not read
	PriceLevels     []PriceLevel
}

// PriceLevel is a row of event_price_levels.
type PriceLevel struct {
	Code       string
	Name       string
	PriceCents int
	Color      string
}

const eventColumns = `e.id, e.name, e.category, e.city, e.description, e.venue_id, v.name, e.layout_version,
	e.starts_at, e.sale_starts_at, e.sale_ends_at, e.status, e.currency, e.max_per_account, e.max_per_hold,
	e.hold_ttl_seconds, e.hold_cap_seconds, e.shard_id, e.waiting_room, e.prequeue_opens_at, e.queue_ceiling,
	e.active_ttl_seconds, e.admission_ttl_seconds, e.room_published_at, e.admission_paused, e.version`

const fromEvents = `SELECT ` + eventColumns + ` FROM events e JOIN venues v ON v.id = e.venue_id`

func scanEvent(row pgx.Row) (Event, error) {
	var e Event
	err := row.Scan(&e.ID, &e.Name, &e.Category, &e.City, &e.Description, &e.VenueID, &e.VenueName, &e.LayoutVersion,
		&e.StartsAt, &e.SaleStartsAt, &e.SaleEndsAt, &e.Status, &e.Currency, &e.MaxPerAccount, &e.MaxPerHold,
		&e.HoldTTL, &e.HoldCap, &e.Shard, &e.WaitingRoom, &e.PrequeueOpensAt, &e.QueueCeiling,
		&e.ActiveTTL, &e.AdmissionTTL, &e.RoomPublishedAt, &e.AdmissionPaused, &e.Version)
	return e, err
}

// ReadEvent returns one event with its price levels, dearest first; found
// is false when there is no such event. In a transaction it reads with
// the transaction's locks and writes.
func ReadEvent(ctx context.Context, db DB, id int64) (e Event, found bool, err error) {
	e, err = scanEvent(db.QueryRow(ctx, fromEvents+` WHERE e.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, err
	}
	rows, err := db.Query(ctx, `SELECT code, name, price_cents, color FROM event_price_levels WHERE event_id = $1 ORDER BY price_cents DESC, code`, id)
	if err != nil {
		return Event{}, false, fmt.Errorf("price levels: %w", err)
	}
	e.PriceLevels, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (PriceLevel, error) {
		var p PriceLevel
		return p, r.Scan(&p.Code, &p.Name, &p.PriceCents, &p.Color)
	})
	if err != nil {
		return Event{}, false, fmt.Errorf("price levels: %w", err)
	}
	return e, true, nil
}

func collectEvents(ctx context.Context, db DB, q string, args ...any) ([]Event, error) {
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	events, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Event, error) { return scanEvent(r) })
	if events == nil {
		events = []Event{}
	}
	return events, err
}

// Listing narrows a list of listed (not draft) events; zero values do
// not narrow.
type Listing struct {
	City     string // compared as search_normalize compares
	Category string
	From, To time.Time // start at or after From, before To
	// OnSaleNow keeps events whose sales are open at this moment.
	OnSaleNow bool
	// OpensWithin, if set, keeps events whose sales open within it.
	OpensWithin time.Duration
}

// where returns the listing's conditions; arg adds a value to the
// statement's and returns its placeholder.
func (l Listing) where(arg func(any) string) []string {
	where := []string{"e.status <> 'draft'"}
	if l.City != "" {
		where = append(where, "search_normalize(e.city) = search_normalize("+arg(l.City)+")")
	}
	if l.Category != "" {
		where = append(where, "e.category = "+arg(l.Category))
	}
	if !l.From.IsZero() {
		where = append(where, "e.starts_at >= "+arg(l.From))
	}
	if !l.To.IsZero() {
		where = append(where, "e.starts_at < "+arg(l.To))
	}
	if l.OnSaleNow {
		where = append(where, "e.status = 'on_sale' AND now() >= e.sale_starts_at AND now() < e.sale_ends_at")
	}
	if l.OpensWithin > 0 {
		where = append(where, "e.status IN ('scheduled', 'on_sale') AND e.sale_starts_at > now() AND e.sale_starts_at < now() + make_interval(secs => "+
			arg(l.OpensWithin.Seconds())+")")
	}
	return where
}

// Key is where an event stands in a list ordered by start then id.
type Key struct {
	StartsAt time.Time
	ID       int64
}

// ListEvents returns up to limit listed events ordered by start then id,
// after the event at after unless it is nil.
func ListEvents(ctx context.Context, db DB, l Listing, after *Key, limit int) ([]Event, error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := l.where(arg)
	if after != nil {
		where = append(where, "(e.starts_at, e.id) > ("+arg(after.StartsAt)+", "+arg(after.ID)+")")
	}
	return collectEvents(ctx, db, fromEvents+` WHERE `+strings.Join(where, " AND ")+
		` ORDER BY e.starts_at, e.id LIMIT `+arg(limit), args...)
}

// SearchEvents returns up to limit listed events, from offset, whose name
// or category holds every word of query above those that match through
// the city, the venue or the description, soonest first within each; the
// last word counts as a prefix and unknown words are corrected to the
// nearest known one (search_query, catalog migration 5). It takes two
// round trips on purpose: the tsqueries come first, so the search is
// planned for those very words (a frequent word walks the start-time
// index and stops at the page, a rare one reads its few rows through the
// GIN index; docs/read-path.md shows both plans).
func SearchEvents(ctx context.Context, db DB, l Listing, query string, offset, limit int) ([]Event, error) {
	var inName, anywhere *string
	if err := db.QueryRow(ctx, `SELECT search_query($1, 'A')::text, search_query($1, '')::text`, query).Scan(&inName, &anywhere); err != nil {
		return nil, fmt.Errorf("search query: %w", err)
	}
	if anywhere == nil {
		return []Event{}, nil
	}
	// Exec mode: an unnamed statement, planned with these words every time
	// (a cached generic plan would pick one index for every word).
	args := []any{pgx.QueryExecModeExec}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args)-1) // the mode is no parameter
	}
	where := l.where(arg)
	name, anyField, upTo := arg(*inName), arg(*anywhere), arg(offset+limit)
	from := fromEvents + ` WHERE ` + strings.Join(where, " AND ")
	q := `(` + from + ` AND e.search_vec @@ ` + name + `::tsquery ORDER BY e.starts_at, e.id LIMIT ` + upTo + `)
		UNION ALL
		(` + from + ` AND e.search_vec @@ ` + anyField + `::tsquery AND NOT e.search_vec @@ ` + name + `::tsquery ORDER BY e.starts_at, e.id LIMIT ` + upTo + `)
		LIMIT ` + arg(limit) + ` OFFSET ` + arg(offset)
	return collectEvents(ctx, db, q, args...)
}

// ListedEvents reads the listed events of ids, in no order: one round
// trip by primary key.
func ListedEvents(ctx context.Context, db DB, ids []int64) ([]Event, error) {
	return collectEvents(ctx, db, fromEvents+` WHERE e.id = ANY($1) AND e.status <> 'draft'`, ids)
}

// WaitingRoomEvents lists events whose waiting room must run around now:
// pre-queue open (or about to open) and sales not over.
func WaitingRoomEvents(ctx context.Context, db DB, now time.Time) ([]Event, error) {
	return collectEvents(ctx, db, fromEvents+` WHERE e.waiting_room AND e.status IN ('scheduled', 'on_sale', 'sold_out')
		  AND coalesce(e.prequeue_opens_at, e.sale_starts_at - interval '30 minutes') <= $1::timestamptz + interval '5 minutes'
		  AND e.sale_ends_at > $1 ORDER BY e.id`, now)
}

// CancelledSince lists the events cancelled (or last changed, once
// cancelled) at or after since, oldest first.
func CancelledSince(ctx context.Context, db DB, since time.Time) ([]Event, error) {
	return collectEvents(ctx, db, fromEvents+` WHERE e.status = 'cancelled' AND e.updated_at >= $1 ORDER BY e.updated_at, e.id LIMIT 1000`, since)
}

// EventsByCreator lists the events an organizer created, drafts and
// cancelled ones included, latest start first.
func EventsByCreator(ctx context.Context, db DB, organizer int64) ([]Event, error) {
	return collectEvents(ctx, db, fromEvents+` WHERE e.created_by = $1 ORDER BY e.starts_at DESC, e.id DESC LIMIT 500`, organizer)
}

// EventIDsByCreator lists the ids of the events an organizer created.
func EventIDsByCreator(ctx context.Context, db DB, organizer int64) ([]int64, error) {
	rows, err := db.Query(ctx, `SELECT id FROM events WHERE created_by = $1`, organizer)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// MarkRoomPublished records the first publication of an event's room.
func MarkRoomPublished(ctx context.Context, db DB, id int64) error {
	_, err := db.Exec(ctx, `UPDATE events SET room_published_at = now() WHERE id = $1 AND room_published_at IS NULL`, id)
	return err
}

// InsertEvent inserts an event (its status the column's default, draft)
// and its price levels in tx, and returns its id; the hold cap is twice the
// hold time.
func InsertEvent(ctx context.Context, tx DB, e Event) (int64, error) {
	var id int64
	if err := tx.QueryRow(ctx, `
		INSERT INTO events (venue_id, layout_version, shard_id, name, category, city, description, starts_at,
			sale_starts_at, sale_ends_at, currency, max_per_account, max_per_hold, hold_ttl_seconds, hold_cap_seconds,
			waiting_room, prequeue_opens_at, queue_ceiling, active_ttl_seconds, admission_ttl_seconds, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14 * 2,
			$15, $16, $17, $18, $19, $20)
		RETURNING id`,
		e.VenueID, e.LayoutVersion, e.Shard, e.Name, e.Category, e.City, e.Description, e.StartsAt,
		e.SaleStartsAt, e.SaleEndsAt, e.Currency, e.MaxPerAccount, e.MaxPerHold, e.HoldTTL,
		e.WaitingRoom, e.PrequeueOpensAt, e.QueueCeiling, e.ActiveTTL, e.AdmissionTTL, e.CreatedBy).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert event: %w", err)
	}
	for _, p := range e.PriceLevels {
		if _, err := tx.Exec(ctx, `INSERT INTO event_price_levels (event_id, code, name, price_cents, color) VALUES ($1, $2, $3, $4, $5)`,
			id, p.Code, p.Name, p.PriceCents, p.Color); err != nil {
			return 0, fmt.Errorf("insert price level %s: %w", p.Code, err)
		}
	}
	return id, nil
}

// UpdateEvent writes the settings an organizer may change after creation
// (all but the venue, layout, currency, status and admission pause).
func UpdateEvent(ctx context.Context, tx DB, e Event) error {
	_, err := tx.Exec(ctx, `UPDATE events SET name = $2, city = $3, category = $4, description = $5, starts_at = $6,
		sale_starts_at = $7, sale_ends_at = $8, max_per_account = $9, max_per_hold = $10, hold_ttl_seconds = $11,
		hold_cap_seconds = $11 * 2, waiting_room = $12, prequeue_opens_at = $13, queue_ceiling = $14,
		active_ttl_seconds = $15, admission_ttl_seconds = $16, updated_at = now() WHERE id = $1`,
		e.ID, e.Name, e.City, e.Category, e.Description, e.StartsAt, e.SaleStartsAt,
		e.SaleEndsAt, e.MaxPerAccount, e.MaxPerHold, e.HoldTTL,
		e.WaitingRoom, e.PrequeueOpensAt, e.QueueCeiling, e.ActiveTTL, e.AdmissionTTL)
	return err
}

// SetWaitingRoom writes an event's waiting-room settings (not its pause).
func SetWaitingRoom(ctx context.Context, tx DB, e Event) error {
	_, err := tx.Exec(ctx, `UPDATE events SET waiting_room = $2, prequeue_opens_at = $3, queue_ceiling = $4,
		active_ttl_seconds = $5, admission_ttl_seconds = $6, updated_at = now() WHERE id = $1`,
		e.ID, e.WaitingRoom, e.PrequeueOpensAt, e.QueueCeiling, e.ActiveTTL, e.AdmissionTTL)
	return err
}

// SetAdmission pauses or resumes an event's admission and sets its ceiling.
func SetAdmission(ctx context.Context, tx DB, id int64, paused bool, ceiling int) error {
	_, err := tx.Exec(ctx, `UPDATE events SET admission_paused = $2, queue_ceiling = $3, updated_at = now() WHERE id = $1`, id, paused, ceiling)
	return err
}

// SetPriceLevel writes a level's price, and its name and colour unless
// empty.
func SetPriceLevel(ctx context.Context, tx DB, eventID int64, p PriceLevel) error {
	_, err := tx.Exec(ctx, `UPDATE event_price_levels SET price_cents = $3, name = coalesce(nullif($4, ''), name),
		color = coalesce(nullif($5, ''), color) WHERE event_id = $1 AND code = $2`, eventID, p.Code, p.PriceCents, p.Name, p.Color)
	return err
}

// EventCreator returns who created an event (nil: an operator); found is
// false when there is no such event. lock takes the row's lock (FOR
// UPDATE) in db, a transaction, and reads the event's version and the
// version at which each watched column last changed (catalog 00009).
func EventCreator(ctx context.Context, db DB, id int64, lock bool) (creator *int64, version int64, changed map[string]int64, found bool, err error) {
	if lock {
		err = db.QueryRow(ctx, `SELECT created_by, version, changed FROM events WHERE id = $1 FOR UPDATE`, id).Scan(&creator, &version, &changed)
	} else {
		err = db.QueryRow(ctx, `SELECT created_by FROM events WHERE id = $1`, id).Scan(&creator)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil, false, nil
	}
	return creator, version, changed, err == nil, err
}

// EventChanges returns the version at which each watched column of an
// event last changed (catalog 00009).
func EventChanges(ctx context.Context, db DB, id int64) (map[string]int64, error) {
	var changed map[string]int64
	return changed, db.QueryRow(ctx, `SELECT changed FROM events WHERE id = $1`, id).Scan(&changed)
}

// ShardTakenByOthers tells whether a shard serves an upcoming, not
// cancelled event that organizer did not create.
func ShardTakenByOthers(ctx context.Context, db DB, shard int, organizer int64) (bool, error) {
	var others bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE shard_id = $1
		AND created_by IS DISTINCT FROM $2 AND status <> 'cancelled' AND starts_at > now() - interval '1 day')`,
		shard, organizer).Scan(&others)
	return others, err
}
