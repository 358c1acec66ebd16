// Package organizer holds what event organizers do: import venue layouts,
// create events (catalog row plus the sellable inventory on the event's
// shard) and open or close sales.
package organizer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/shared/text"
	"github.com/catraca/catraca/shared/venue"
)

// ErrInvalidEvent means the event specification cannot be accepted.
var ErrInvalidEvent = errors.New("invalid event")

// EventSpec is what an organizer sends to create an event.
type EventSpec struct {
	VenueID       int64  `json:"venue_id"`
	LayoutVersion int    `json:"layout_version"`
	Name          string `json:"name"`
	// City defaults to the venue's.
	City          string             `json:"city"`
	Category      string             `json:"category"`
	Description   string             `json:"description"`
	StartsAt      time.Time          `json:"starts_at"`
	SaleStartsAt  time.Time          `json:"sale_starts_at"`
	SaleEndsAt    time.Time          `json:"sale_ends_at"`
	Currency      string             `json:"currency"`
	PriceLevels   []event.PriceLevel `json:"price_levels"`
	MaxPerAccount int                `json:"max_per_account"`
	MaxPerHold    int                `json:"max_per_hold"`
	HoldTTL       int                `json:"hold_ttl_seconds"`
	WaitingRoom   event.WaitingRoom  `json:"waiting_room"`
	// Draft keeps the new event unlisted until it is published (its
	// status set to scheduled).
	Draft bool `json:"draft,omitempty"`
	// Shard pins the event to a shard; 0 lets placement choose.
	Shard int `json:"shard,omitempty"`
	// GASlots overrides the GA counter spread (benchmarks use 1 as baseline).
	GASlots int `json:"-"`
}

// Service creates and manages events.
type Service struct {
	catalog *pgxpool.Pool
	shards  *shard.Router
	stores  *shardstore.Shards
	venues  *venue.Store
	events  *event.Directory
	outbox  *catalogstore.Outbox
}

// New returns the organizer service.
func New(catalog *pgxpool.Pool, shards *shard.Router) *Service {
	return &Service{catalog: catalog, shards: shards, stores: shardstore.Open(shards), venues: venue.NewStore(catalog), events: event.NewDirectory(catalog),
		outbox: catalogstore.OpenOutbox(catalog)}
}

// ImportLayout stores a venue layout as an operator (a new venue when
// venueID is 0), for seeding and tools.
func (s *Service) ImportLayout(ctx context.Context, venueID int64, l venue.Layout) (venue.Layout, error) {
	return s.venues.Import(ctx, 0, venueID, l)
}

// ImportLayoutAs stores a venue layout for an organizer: a new venue is
// theirs, and a new version only of a venue of theirs (another organizer's
// row is the catalog row of the event spec describes (without its id,
// shard and creator).
func (spec EventSpec) row() catalogstore.Event {
	w := spec.WaitingRoom
	r := catalogstore.Event{VenueID: spec.VenueID, LayoutVersion: spec.LayoutVersion, Name: spec.Name, Category: spec.Category,
		City: spec.City, Description: spec.Description, StartsAt: spec.StartsAt, SaleStartsAt: spec.SaleStartsAt,
		SaleEndsAt: spec.SaleEndsAt, Currency: spec.Currency, MaxPerAccount: spec.MaxPerAccount, MaxPerHold: spec.MaxPerHold,
		HoldTTL: spec.HoldTTL, WaitingRoom: w.Enabled, PrequeueOpensAt: w.PrequeueOpensAt, QueueCeiling: w.Ceiling,
		ActiveTTL: w.ActiveTTL, AdmissionTTL: w.AdmissionTTL}
	for _, p := range spec.PriceLevels {
		r.PriceLevels = append(r.PriceLevels, catalogstore.PriceLevel(p))
	}
	return r
}

// venue is venue.ErrNotFound).
func (s *Service) ImportLayoutAs(ctx context.Context, organizerID, venueID int64, l venue.Layout) (venue.Layout, error) {
	return s.venues.Import(ctx, organizerID, venueID, l)
}

func (spec *EventSpec) validate() error {
	bad := func(pointer, msg string) error { return reject.New(ErrInvalidEvent, pointer, msg) }
	spec.Name = strings.TrimSpace(spec.Name)
	switch {
	case text.Blank(spec.Name) || text.Length(spec.Name) > 200:
		return bad("/name", "Name must be 1 to 200 characters.")
	case spec.VenueID <= 0:
		return bad("/venue_id", "venue_id and layout_version are required (positive numbers of an imported layout).")
	case spec.LayoutVersion <= 0 || spec.LayoutVersion > math.MaxInt32:
		return bad("/layout_version", "venue_id and layout_version are required (positive numbers of an imported layout).")
	case spec.StartsAt.IsZero() || spec.SaleStartsAt.IsZero() || spec.SaleEndsAt.IsZero():
		return bad("", "starts_at, sale_starts_at and sale_ends_at are required.")
	case !spec.SaleEndsAt.After(spec.SaleStartsAt):
		return bad("/sale_ends_at", "sale_ends_at must be after sale_starts_at.")
	case spec.SaleEndsAt.After(spec.StartsAt.Add(24 * time.Hour)):
		return bad("/sale_ends_at", "sale_ends_at must be at most 24 hours after starts_at: a box office may sell through the show, not for days after it.")
	case len(spec.PriceLevels) == 0:
		return bad("/price_levels", "price_levels are required.")
	case text.Length(spec.Category) > 50:
		return bad("/category", "Category must be at most 50, city at most 100 and description at most 5000 characters.")
	case text.Length(spec.City) > 100:
		return bad("/city", "Category must be at most 50, city at most 100 and description at most 5000 characters.")
	case text.Length(spec.Description) > 5000:
		return bad("/description", "Category must be at most 50, city at most 100 and description at most 5000 characters.")
	case spec.Currency != "" && !isCurrency(spec.Currency):
		return bad("/currency", "Currency must be an ISO 4217 code such as BRL.")
	case spec.MaxPerAccount < 0 || spec.MaxPerAccount > maxTickets:
		return limitRefusal("max_per_account")
	case spec.MaxPerHold < 0 || spec.MaxPerHold > maxTickets:
		return limitRefusal("max_per_hold")
	case spec.HoldTTL < 0 || spec.HoldTTL > maxHoldTTL:
		return limitRefusal("hold_ttl_seconds")
	case spec.Shard < 0:
		return bad("/shard", "Shard must be positive.")
	case !text.OneLine(spec.Name):
		return bad("/name", "Name must be one line, without control characters.")
	case !text.OneLine(spec.City):
		return bad("/city", "City must be one line, without control characters.")
	case !text.OneLine(spec.Category):
		return bad("/category", "Category must be one line, without control characters.")
	}
	if err := validPrices("/price_levels", spec.PriceLevels); err != nil {
		return err
	}
	if spec.Category == "" {
		spec.Category = "music"
	}
	if spec.Currency == "" {
		spec.Currency = "BRL"
	}
	if spec.MaxPerAccount == 0 {
		spec.MaxPerAccount = 6
	}
	if spec.MaxPerHold == 0 {
		spec.MaxPerHold = spec.MaxPerAccount
	}
	if spec.HoldTTL == 0 {
		spec.HoldTTL = 480
	}
	if spec.MaxPerHold > spec.MaxPerAccount {
		return bad("/max_per_hold", fmt.Sprintf("max_per_hold (%d) cannot be more than max_per_account (%d): one hold cannot take more tickets than one fan may buy.",
			spec.MaxPerHold, spec.MaxPerAccount))
	}
	roomDefaults(&spec.WaitingRoom)
	return validRoom("/waiting_room", spec.WaitingRoom)
}

// futureStart refuses a start already past, for a new event or a start
// moved: no fan can go to it. An event that has begun keeps its start
// while its other settings change (the console sends them all).
func futureStart(start time.Time) error {
	if start.After(time.Now()) {
		return nil
	}
	return reject.New(ErrInvalidEvent, "/starts_at", fmt.Sprintf("starts_at (%s) is in the past: an event must start after now.",
		start.UTC().Format(time.RFC3339)))
}

// SentLimits refuses a ticket limit or hold time sent as 0: in an
// EventSpec 0 stands for "left out" (the default), so a request that can
// leave a limit out reads it as a pointer and refuses a 0 it sent, which
// is out of bounds, instead of turning it into the default.
func SentLimits(maxPerAccount, maxPerHold, holdTTL *int) error {
	for _, l := range []struct {
		field string
		v     *int
	}{{"max_per_account", maxPerAccount}, {"max_per_hold", maxPerHold}, {"hold_ttl_seconds", holdTTL}} {
		if l.v != nil && *l.v == 0 {
			return limitRefusal(l.field)
		}
	}
	return nil
}

// limitRefusal refuses a ticket limit or hold time out of its bounds.
func limitRefusal(field string) error {
	msg := fmt.Sprintf("max_per_account and max_per_hold must be between 1 and %d.", maxTickets)
	if field == "hold_ttl_seconds" {
		msg = fmt.Sprintf("hold_ttl_seconds must be between 1 and %d.", maxHoldTTL)
	}
	return reject.New(ErrInvalidEvent, "/"+field, msg)
}

// roomDefaults fills the waiting-room settings left out (0).
func roomDefaults(w *event.WaitingRoom) {
	if w.Ceiling == 0 {
		w.Ceiling = 1000
	}
	if w.ActiveTTL == 0 {
		w.ActiveTTL = 600
	}
	if w.AdmissionTTL == 0 {
		w.AdmissionTTL = 900
	}
}

// Bounds of what an organizer may set: far above any real event, and well
// inside the database's 32-bit columns (hold_cap_seconds is twice the TTL).
const (
	maxTickets    = 1000
	maxHoldTTL    = 3600
	maxPriceCents = 100_000_000
	maxCeiling    = 1_000_000
	maxRoomTTL    = 86400
)

func isCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for i := range 3 {
		if c[i] < 'A' || c[i] > 'Z' {
			return false
		}
	}
	return true
}

var color = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// validPrices checks price levels as the API receives them, at pointer in
// the request body.
func validPrices(pointer string, levels []event.PriceLevel) error {
	seen := map[string]bool{}
	for i, p := range levels {
		at := pointer + reject.Pointer(i)
		if text.Blank(p.Code) || text.Length(p.Code) > 20 || p.Name != "" && text.Blank(p.Name) || text.Length(p.Name) > 100 {
			return reject.New(ErrInvalidEvent, at, "Every price level needs a code of 1 to 20 characters and a name of at most 100 (or none).")
		}
		// Shown on the event page, the map's legend and the exports.
		if !text.OneLine(p.Code) || !text.OneLine(p.Name) {
			return reject.New(ErrInvalidEvent, at, fmt.Sprintf("Price level %q: write its code and name on one line, without control characters.", p.Code))
		}
		if seen[p.Code] {
			return reject.New(ErrInvalidEvent, at+"/code", fmt.Sprintf("Price level %q is listed twice; list each level once.", p.Code))
		}
		seen[p.Code] = true
		if p.Color != "" && !color.MatchString(p.Color) {
			return reject.New(ErrInvalidEvent, at+"/color", fmt.Sprintf("The color of level %q must be written #rrggbb, like #1f6feb.", p.Code))
		}
		if p.PriceCents < 1 || p.PriceCents > maxPriceCents {
			// 0 too: no PSP charges nothing, so a free seat could never be paid.
			return reject.New(ErrInvalidEvent, at+"/price_cents",
				fmt.Sprintf("price_cents of level %q must be between 1 and %d: the payment provider charges at least one cent.", p.Code, maxPriceCents))
		}
	}
	return nil
}

// changeablePrices checks new prices for e's levels, at pointer in the
// request body.
func changeablePrices(pointer string, e event.Event, levels []event.PriceLevel) error {
	if err := validPrices(pointer, levels); err != nil {
		return err
	}
	known := map[string]bool{}
	for _, p := range e.PriceLevels {
		known[p.Code] = true
	}
	for i, p := range levels {
		if !known[p.Code] {
			return reject.New(ErrInvalidEvent, pointer+reject.Pointer(i, "code"), fmt.Sprintf("Price level %q is not one of this event's.", p.Code))
		}
	}
	return nil
}

// validRoom checks waiting-room settings at pointer in the request body.
func validRoom(pointer string, w event.WaitingRoom) error {
	field := ""
	switch {
	case w.Ceiling <= 0 || w.Ceiling > maxCeiling:
		field = "/ceiling"
	case w.ActiveTTL <= 0 || w.ActiveTTL > maxRoomTTL:
		field = "/active_ttl_seconds"
	case w.AdmissionTTL <= 0 || w.AdmissionTTL > maxRoomTTL:
		field = "/admission_ttl_seconds"
	default:
		return nil
	}
	return RoomRefusal(pointer + field)
}

// RoomRefusal refuses the waiting-room setting at pointer (its ceiling or
// one of its times) as out of bounds.
func RoomRefusal(pointer string) error {
	return reject.New(ErrInvalidEvent, pointer, fmt.Sprintf(
		"Ceiling must be between 1 and %d, active_ttl_seconds and admission_ttl_seconds between 1 and %d.", maxCeiling, maxRoomTTL))
}

// CreateEvent writes the catalog row as a draft, instantiates the inventory
// on the chosen shard, then schedules the event. A crash in between leaves
// an unlisted draft that a retry completes.
func (s *Service) CreateEvent(ctx context.Context, createdBy int64, spec EventSpec) (event.Event, error) {
	if err := spec.validate(); err != nil {
		return event.Event{}, err
	}
	if err := futureStart(spec.StartsAt); err != nil {
		return event.Event{}, err
	}
	if err := s.venues.Owns(ctx, createdBy, spec.VenueID); err != nil {
		return event.Event{}, err
	}
	layout, err := s.venues.Load(ctx, spec.VenueID, spec.LayoutVersion)
	if err != nil {
		return event.Event{}, err
	}
	prices := map[string]int{}
	for _, p := range spec.PriceLevels {
		prices[p.Code] = p.PriceCents
	}
	levels := map[string]bool{}
	for _, sec := range layout.Sections {
		if _, ok := prices[sec.PriceLevel]; !ok {
			return event.Event{}, reject.New(ErrInvalidEvent, "/price_levels", fmt.Sprintf("No price for level %q (section %s).", sec.PriceLevel, sec.Code))
		}
		levels[sec.PriceLevel] = true
	}
	for i, p := range spec.PriceLevels {
		if !levels[p.Code] {
			// It would be listed at a price nothing is sold at.
			return event.Event{}, reject.New(ErrInvalidEvent, "/price_levels"+reject.Pointer(i, "code"),
				fmt.Sprintf("Price level %q is not one of the layout's; price only the levels its sections use.", p.Code))
		}
	}
	shardID := spec.Shard
	if shardID == 0 {
		if shardID, err = s.shards.Place(ctx); err != nil {
			return event.Event{}, err
		}
	}
	st, err := s.stores.Primary(shardID)
	if err != nil {
		return event.Event{}, reject.New(ErrInvalidEvent, "/shard", fmt.Sprintf("There is no shard %d.", shardID))
	}
	if spec.Shard != 0 && createdBy > 0 {
		if err := s.canPin(ctx, createdBy, shardID); err != nil {
			return event.Event{}, err
		}
	}
	var creator *int64
	if createdBy > 0 {
		creator = &createdBy
	}
	var id int64
	err = pgx.BeginFunc(ctx, s.catalog, func(tx pgx.Tx) error {
		row := spec.row()
		row.Shard, row.CreatedBy, row.City = shardID, creator, cmp.Or(strings.TrimSpace(spec.City), layout.City)
		for i, p := range row.PriceLevels {
			row.PriceLevels[i].Name = cmp.Or(p.Name, p.Code)
		}
		var err error
		id, err = catalogstore.InsertEvent(ctx, tx, row)
		return err
	})
	if err != nil {
		return event.Event{}, err
	}
	if err := inventory.Instantiate(ctx, st, id, layout, prices, spec.GASlots); err != nil {
		return event.Event{}, err
	}
	if !spec.Draft {
		if err := s.SetStatus(ctx, id, event.Scheduled); err != nil {
			return event.Event{}, err
		}
	}
	return s.events.Get(ctx, id)
}

// SetStatus moves an event between draft, scheduled, on_sale, closed,
// sold_out and cancelled.
func (s *Service) SetStatus(ctx context.Context, id int64, status event.Status) error {
	return setStatus(ctx, s.catalog, id, status)
}

// setStatus sets an event's status through db.
func setStatus(ctx context.Context, db catalogstore.DB, id int64, status event.Status) error {
	found, err := catalogstore.SetEventStatus(ctx, db, id, string(status))
	if err != nil {
		return fmt.Errorf("set status of event %d: %w", id, err)
	}
	if !found {
		return fmt.Errorf("event %d: %w", id, event.ErrNotFound)
	}
	return nil
}

// ErrShardTaken means an organizer tried to pin an event to a shard that
// serves another organizer's upcoming events.
var ErrShardTaken = errors.New("shard serves another organizer's events")

// canPin lets an organizer pin an event to a shard only when no other
// organizer has an upcoming event there: a tour may take a shard of its own
// (or share one with its own events), but nobody can crowd someone else's
// on-sale onto their shard. Operators (createdBy 0) may pin anywhere.
func (s *Service) canPin(ctx context.Context, organizerID int64, shardID int) error {
	others, err := catalogstore.ShardTakenByOthers(ctx, s.catalog, shardID, organizerID)
	if err != nil {
		return fmt.Errorf("check shard %d: %w", shardID, err)
	}
	if others {
		return fmt.Errorf("shard %d: %w", shardID, ErrShardTaken)
	}
	return nil
}

// statuses an organizer may set.
var statuses = map[event.Status]bool{event.Scheduled: true, event.OnSale: true, event.Closed: true, event.Cancelled: true}

// ChangeStatus opens or closes sales of an event the organizer created, if
// its version satisfies ifMatch. Cancelling a cancelled event again is
// allowed (the caller asks its failed refunds again).
func (s *Service) ChangeStatus(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, status string) (event.Event, error) {
	if !statuses[event.Status(status)] {
		return event.Event{}, reject.New(ErrInvalidEvent, "/status", "Status must be one of scheduled, on_sale, closed, cancelled.")
	}
	return s.locked(ctx, organizerID, eventID, ifMatch, func(tx pgx.Tx, e event.Event) error {
		if e.Status != event.Cancelled {
			return setStatus(ctx, tx, eventID, event.Status(status))
		}
		if event.Status(status) != event.Cancelled {
			return reject.New(ErrInvalidEvent, "/status", "A cancelled event stays cancelled (its orders are refunded).")
		}
		return nil // cancelled again: the caller asks its failed refunds again
	})
}

// enqueueCopy writes into the catalog's outbox, in the transaction that
// changed an event from before to after, the copy of its status and sale
// end to its shard, if either changed, and returns the message's id (0:
// none). Holds and checkouts read events through a cache, and the shard
// refuses those that read the sale open before it was stopped (CopyStatus).
// Written with the change, the copy is delivered even if everything after
// the catalog's commit fails; versioned, a late or repeated one is harmless.
func enqueueCopy(ctx context.Context, tx pgx.Tx, before, after event.Event) (int64, error) {
	if before.Status == after.Status && before.SaleEndsAt.Equal(after.SaleEndsAt) {
		return 0, nil
	}
	return catalogstore.EnqueueStatusCopy(ctx, tx, after.StatusCopy())
}

// copyWait bounds the copy made at once: later than the sale path's cache
// (about 2 s), the copy stops no hold the cache would not.
const copyWait = 2 * time.Second

// copyNow delivers message msg (enqueueCopy) at once, after the catalog
// committed, and marks it processed, so that in the common case the cache's
// window closes in milliseconds. If it fails, the change is made all the
// same: the outbox worker (order.Fulfil) delivers the copy, retrying until
// it lands, and sets it aside for an operator after its tries.
func (s *Service) copyNow(ctx context.Context, e event.Event, msg int64) {
	if msg == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, copyWait)
	defer cancel()
	st, err := s.stores.Primary(e.Shard)
	if err != nil || st.CopyStatus(ctx, shardstore.StatusCopy(e.StatusCopy())) != nil {
		return // the worker's to deliver
	}
	_ = s.outbox.WithTx(ctx, func(tx catalogstore.OutboxTx) error { return tx.Processed(ctx, msg) }) // else delivered again, harmlessly
}

// owns fails with event.ErrNotFound unless organizerID created the event:
// another organizer's event is answered as if it did not exist, so its id
// reveals nothing (a draft's included).
func (s *Service) owns(ctx context.Context, organizerID, eventID int64) error {
	owner, _, _, found, err := catalogstore.EventCreator(ctx, s.catalog, eventID, false)
	if err == nil && (!found || owner == nil || *owner != organizerID) {
		return fmt.Errorf("event %d: %w", eventID, event.ErrNotFound)
	}
	return err
}

// SetPriceLevels changes prices of an event. Seats and GA places taken from
// now on cost the new price (a seat held now too, once its hold ends, and a
// late payment's re-take is refunded rather than sold at the old one); held
// and sold ones keep the price copied into their orders.
func (s *Service) SetPriceLevels(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, levels []event.PriceLevel) (event.Event, error) {
	e, err := s.write(ctx, organizerID, eventID, ifMatch, func(tx pgx.Tx, e event.Event) error {
		if err := changeablePrices("", e, levels); err != nil {
			return err
		}
		return updatePrices(ctx, tx, eventID, levels)
	})
	if err != nil {
		return event.Event{}, err
	}
	if err := s.pushPrices(ctx, eventID); err != nil {
		return event.Event{}, err
	}
	return e, nil
}

// updatePrices writes new prices of an event's levels in the catalog.
func updatePrices(ctx context.Context, tx pgx.Tx, eventID int64, levels []event.PriceLevel) error {
	for _, p := range levels {
		if err := catalogstore.SetPriceLevel(ctx, tx, eventID, catalogstore.PriceLevel(p)); err != nil {
			return fmt.Errorf("set price level %s of event %d: %w", p.Code, eventID, err)
		}
	}
	return nil
}

// pushPrices copies every price level of an event from the catalog to its
// shard in one shard transaction. The catalog and the shard are different
// databases, so no transaction spans both: the catalog is written first and
// is the truth, the shard follows it. A crash in between leaves the shard's
// unsold places at old prices until the next SetPriceLevels, of any levels,
// copies every level again.
func (s *Service) pushPrices(ctx context.Context, eventID int64) error {
	e, err := s.events.Get(ctx, eventID)
	if err != nil {
		return err
	}
	st, err := s.stores.Primary(e.Shard)
	if err != nil {
		return err
	}
	err = st.WithTx(ctx, func(tx shardstore.Tx) error {
		for _, p := range e.PriceLevels {
			if err := tx.SetPrice(ctx, eventID, p.Code, p.PriceCents); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("price the inventory of event %d: %w", eventID, err)
	}
	return nil
}

// SetWaitingRoom changes an event's waiting-room settings; the admission
// controller publishes them to Redis on its next pass.
func (s *Service) SetWaitingRoom(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, w event.WaitingRoom) (event.Event, error) {
	return s.write(ctx, organizerID, eventID, ifMatch, func(tx pgx.Tx, _ event.Event) error {
		roomDefaults(&w)
		if err := validRoom("", w); err != nil {
			return err
		}
		row := EventSpec{WaitingRoom: w}.row()
		row.ID = eventID
		if err := catalogstore.SetWaitingRoom(ctx, tx, row); err != nil {
			return fmt.Errorf("set waiting room of event %d: %w", eventID, err)
		}
		return nil
	})
}

// Event returns an event of the organizer's, drafts included; another
// organizer's event is not found, as if it did not exist.
func (s *Service) Event(ctx context.Context, organizerID, eventID int64) (event.Event, error) {
	if err := s.owns(ctx, organizerID, eventID); err != nil {
		return event.Event{}, err
	}
	return s.events.Get(ctx, eventID)
}

// EventPatch changes some settings of an event; a field left out (nil)
// keeps its value. The venue, layout and currency are fixed at creation:
// the inventory was built from them.
type EventPatch struct {
	Name          *string            `json:"name"`
	City          *string            `json:"city"`
	Category      *string            `json:"category"`
	Description   *string            `json:"description"`
	StartsAt      *time.Time         `json:"starts_at"`
	SaleStartsAt  *time.Time         `json:"sale_starts_at"`
	SaleEndsAt    *time.Time         `json:"sale_ends_at"`
	MaxPerAccount *int               `json:"max_per_account"`
	MaxPerHold    *int               `json:"max_per_hold"`
	HoldTTL       *int               `json:"hold_ttl_seconds"`
	WaitingRoom   *event.WaitingRoom `json:"waiting_room"`
	PriceLevels   []event.PriceLevel `json:"price_levels"`
}

// UpdateEvent applies a patch to an event of the organizer's, validated
// as a whole like a new event. Prices change as SetPriceLevels does.
func (s *Service) UpdateEvent(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, p EventPatch) (event.Event, error) {
	e, err := s.write(ctx, organizerID, eventID, ifMatch, func(tx pgx.Tx, e event.Event) error {
		if err := SentLimits(p.MaxPerAccount, p.MaxPerHold, p.HoldTTL); err != nil {
			return err
		}
		if p.StartsAt != nil && !p.StartsAt.Equal(e.StartsAt) {
			if err := futureStart(*p.StartsAt); err != nil {
				return err
			}
		}
		spec := EventSpec{VenueID: e.VenueID, LayoutVersion: e.LayoutVersion, Name: e.Name, City: e.City, Category: e.Category,
			Description: e.Description, StartsAt: e.StartsAt, SaleStartsAt: e.SaleStartsAt, SaleEndsAt: e.SaleEndsAt,
			Currency: e.Currency, PriceLevels: e.PriceLevels, MaxPerAccount: e.MaxPerAccount, MaxPerHold: e.MaxPerHold,
			HoldTTL: e.HoldTTL, WaitingRoom: e.WaitingRoom}
		set(&spec.Name, p.Name)
		set(&spec.City, p.City)
		set(&spec.Category, p.Category)
		set(&spec.Description, p.Description)
		set(&spec.StartsAt, p.StartsAt)
		set(&spec.SaleStartsAt, p.SaleStartsAt)
		set(&spec.SaleEndsAt, p.SaleEndsAt)
		set(&spec.MaxPerAccount, p.MaxPerAccount)
		set(&spec.MaxPerHold, p.MaxPerHold)
		set(&spec.HoldTTL, p.HoldTTL)
		if spec.MaxPerAccount < 1 || spec.MaxPerAccount > maxTickets {
			// Before the advice below, which would suggest the same bad value.
			return limitRefusal("max_per_account")
		}
		if p.MaxPerHold == nil && spec.MaxPerHold > spec.MaxPerAccount {
			// Lowering the hold limit in silence would keep it low when the
			// account limit goes back up: the organizer decides both.
			return reject.New(ErrInvalidEvent, "/max_per_account", fmt.Sprintf("max_per_account (%d) is below this event's max_per_hold (%d): send max_per_hold too, "+
				"at most %[1]d, as in {\"max_per_account\": %[1]d, \"max_per_hold\": %[1]d}.", spec.MaxPerAccount, spec.MaxPerHold))
		}
		set(&spec.WaitingRoom, p.WaitingRoom)
		if err := spec.validate(); err != nil {
			return err
		}
		if text.Blank(spec.City) {
			return reject.New(ErrInvalidEvent, "/city", "City must be 1 to 100 characters.")
		}
		if err := changeablePrices("/price_levels", e, p.PriceLevels); err != nil {
			return err
		}
		row := spec.row()
		row.ID, row.City = eventID, strings.TrimSpace(spec.City)
		if err := catalogstore.UpdateEvent(ctx, tx, row); err != nil {
			return fmt.Errorf("update event %d: %w", eventID, err)
		}
		return updatePrices(ctx, tx, eventID, p.PriceLevels)
	})
	if err != nil || p.PriceLevels == nil {
		return e, err
	}
	if err := s.pushPrices(ctx, eventID); err != nil {
		return event.Event{}, err
	}
	return e, nil
}

// set overwrites *dst with a patch's value, if the patch has one.
func set[T any](dst, v *T) {
	if v != nil {
		*dst = *v
	}
}
