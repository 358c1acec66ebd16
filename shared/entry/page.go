package entry

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/shardstore"
)

// How the ticket list is cut and when its codes are live. An event is
// past PastAfter its start (events have no end time); its codes come with
// the list from LiveBefore its doors open (its start when doors are not
// set) until then: the day of the event, when the fan is on the way.
const (
	MaxPage    = 50
	LiveBefore = 6 * time.Hour
	PastAfter  = 12 * time.Hour
)

// ErrBadCursor means a page cursor was not one the list gave.
var ErrBadCursor = errors.New("invalid ticket page cursor")

// Page is a page of an account's tickets: upcoming events first, soonest
// first, then past events, latest first; an event's tickets by id.
type Page struct {
	Tickets []Ticket `json:"tickets"`
	// Next is the cursor of the next page, empty on the last.
	Next string `json:"next_cursor,omitempty"`
}

// liveFrom is when a ticket's codes come with the list.
func liveFrom(startsAt time.Time, doors *time.Time) time.Time {
	if doors != nil && doors.Before(startsAt) {
		startsAt = *doors
	}
	return startsAt.Add(-LiveBefore)
}

// eventInfo is what the list shows and sorts by of an event.
type eventInfo struct {
	name     string
	startsAt time.Time
}

// eventInfo reads events' names and start times from the catalog.
func (s *Service) eventInfo(ctx context.Context, ids []int64) (map[int64]eventInfo, error) {
	names, err := catalogstore.EventNames(ctx, s.catalog, ids)
	out := make(map[int64]eventInfo, len(names))
	for id, e := range names {
		out[id] = eventInfo{name: e.Name, startsAt: e.StartsAt}
	}
	return out, err
}

// cursor is where a page starts: after ticket of event (which starts at
// startsAt), in the order the first page was cut at asOf, so an event
// that turns past between two pages is neither skipped nor repeated.
type cursor struct {
	asOf, startsAt time.Time
	event, ticket  int64
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d.%d.%d", c.asOf.Unix(), c.startsAt.Unix(), c.event, c.ticket))
}

func parseCursor(v string) (cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	parts := strings.Split(string(b), ".")
	if err != nil || len(parts) != 4 {
		return cursor{}, ErrBadCursor
	}
	var n [4]int64
	for i, p := range parts {
		if n[i], err = strconv.ParseInt(p, 10, 64); err != nil || n[i] < 0 || strconv.FormatInt(n[i], 10) != p {
			return cursor{}, ErrBadCursor
		}
	}
	return cursor{asOf: time.Unix(n[0], 0).UTC(), startsAt: time.Unix(n[1], 0).UTC(), event: n[2], ticket: n[3]}, nil
}

// place is an event's position in the list as of asOf.
type place struct {
	past  bool
	at    int64 // start for upcoming events, minus start for past ones
	event int64
}

func placeOf(event int64, startsAt, asOf time.Time) place {
	if startsAt.Add(PastAfter).Before(asOf) {
		return place{past: true, at: -startsAt.Unix(), event: event}
	}
	return place{at: startsAt.Unix(), event: event}
}

func (p place) compare(q place) int {
	if p.past != q.past {
		if p.past {
			return 1
		}
		return -1
	}
	return cmp.Or(cmp.Compare(p.at, q.at), cmp.Compare(p.event, q.event))
}

// Page lists up to limit of the tickets an account holds from the cursor
// a page before gave (empty: the first page). Valid tickets of events
// within their live time carry their codes; others get them from Ticket.
func (s *Service) Page(ctx context.Context, account int64, after string, limit int) (Page, error) {
	out := Page{Tickets: []Ticket{}}
	now := s.Now()
	c := cursor{asOf: now}
	if after != "" {
		var err error
		if c, err = parseCursor(after); err != nil {
			return out, err
		}
	}
	// Events first, counted on each shard: only a page's tickets are read.
	counts, stores := map[int64]int{}, map[int64]*shardstore.Store{}
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id)
		if err != nil {
			return out, err
		}
		if err := s.keyed(ctx, st, account); err != nil {
			return out, err
		}
		n, err := st.HeldEvents(ctx, account)
		if err != nil {
			return out, fmt.Errorf("tickets of account %d: %w", account, err)
		}
		for ev, k := range n {
			counts[ev], stores[ev] = k, st
		}
	}
	ids := make([]int64, 0, len(counts))
	for ev := range counts {
		ids = append(ids, ev)
	}
	info, err := s.eventInfo(ctx, ids)
	if err != nil {
		return out, err
	}
	from := placeOf(c.event, c.startsAt, c.asOf)
	places := make([]place, 0, len(ids))
	for _, ev := range ids {
		if p := placeOf(ev, info[ev].startsAt, c.asOf); after == "" || p.compare(from) >= 0 {
			places = append(places, p)
		}
	}
	slices.SortFunc(places, place.compare)
	// The page's events: enough tickets for one more than the page, to
	// know whether another page follows. The cursor's event counts none:
	// some of its tickets were on the pages before.
	var events []int64
	for n := 0; n <= limit && len(places) > 0; places = places[1:] {
		ev := places[0].event
		events = append(events, ev)
		if ev != c.event {
			n += counts[ev]
		}
	}
	var held []shardstore.HeldTicket
	for st, evs := range byStore(events, stores) {
		h, err := st.HeldTickets(ctx, account, shardstore.HeldPage{Events: evs, AfterEvent: c.event, After: c.ticket, Limit: limit + 1}, defaults.row())
		if err != nil {
			return out, fmt.Errorf("tickets of account %d: %w", account, err)
		}
		held = append(held, h...)
	}
	pos := make(map[int64]int, len(events))
	for i, ev := range events {
		pos[ev] = i
	}
	slices.SortFunc(held, func(a, b shardstore.HeldTicket) int {
		return cmp.Or(cmp.Compare(pos[a.EventID], pos[b.EventID]), cmp.Compare(a.ID, b.ID))
	})
	if len(held) > limit {
		last := held[limit-1]
		out.Next = cursor{asOf: c.asOf, startsAt: info[last.EventID].startsAt, event: last.EventID, ticket: last.ID}.String()
		held = held[:limit]
	}
	for _, h := range held {
		ev := info[h.EventID]
		live := !now.Before(liveFrom(ev.startsAt, h.Rules.DoorsOpenAt)) && !placeOf(h.EventID, ev.startsAt, now).past
		t, err := s.show(h, ev, now, live)
		if err != nil {
			return out, fmt.Errorf("tickets of account %d: %w", account, err)
		}
		out.Tickets = append(out.Tickets, t)
	}
	return out, nil
}

// byStore groups events, in their order, by the shard store they live on.
func byStore(events []int64, stores map[int64]*shardstore.Store) map[*shardstore.Store][]int64 {
	out := map[*shardstore.Store][]int64{}
	for _, ev := range events {
		out[stores[ev]] = append(out[stores[ev]], ev)
	}
	return out
}

// DoorEvent is an event whose doors an account keeps, as its door staff's
// list shows it.
type DoorEvent struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	StartsAt time.Time `json:"starts_at"`
	Venue    string    `json:"venue_name"`
	City     string    `json:"city"`
}

// DoorEvents lists the events an account was granted the doors of that
// have not ended (started at most a day ago) and are not cancelled,
// soonest first. Grants live on each event's shard, so it asks every
// shard once (one small table read each) and the catalog once; the web app
// asks once per sign-in, not per page.
func (s *Service) DoorEvents(ctx context.Context, account int64) ([]DoorEvent, error) {
	var ids []int64
	for _, id := range s.shards.IDs() {
		st, err := s.shards.Primary(id) // a grant just made is there
		if err != nil {
			return nil, err
		}
		found, err := st.DoorEventsOf(ctx, account)
		if err != nil {
			return nil, err
		}
		ids = append(ids, found...)
	}
	out := []DoorEvent{}
	if len(ids) == 0 {
		return out, nil
	}
	events, err := catalogstore.UpcomingEvents(ctx, s.catalog, ids, s.Now().Add(-24*time.Hour))
	for _, e := range events {
		out = append(out, DoorEvent(e))
	}
	return out, err
}
