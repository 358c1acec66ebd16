// Package venue stores venue seat layouts in the catalog. A layout version is
// immutable once written; a change makes a new version, so clients can cache
// a layout forever and events keep the map they were sold on.
package venue

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/text"
)

// Errors of the venue domain.
var (
	ErrInvalidLayout = errors.New("invalid layout")
	ErrNotFound      = errors.New("layout not found")
)

// Layout is a whole venue map as organizers import it and browsers draw it.
type Layout struct {
	VenueID  int64     `json:"venue_id,omitempty"`
	Version  int       `json:"version,omitempty"`
	Name     string    `json:"name"`
	City     string    `json:"city"`
	Country  string    `json:"country,omitempty"`
	Timezone string    `json:"timezone,omitempty"`
	Width    int       `json:"width"`
	Height   int       `json:"height"`
	Stage    [][2]int  `json:"stage,omitempty"`
	Sections []Section `json:"sections"`
}

// Section is a block of seats, or a standing (general-admission) area.
type Section struct {
	Code       string   `json:"code"`
	Name       string   `json:"name"`
	Kind       string   `json:"kind"` // seated | standing
	Rank       int      `json:"rank"` // lower is better
	PriceLevel string   `json:"price_level"`
	Capacity   int      `json:"capacity,omitempty"` // standing only
	Shape      [][2]int `json:"shape,omitempty"`
	Rows       []Row    `json:"rows,omitempty"`
}

// Row is one row of a seated section.
type Row struct {
	Label string `json:"label"`
	Rank  int    `json:"rank"`
	Seats []Seat `json:"seats"`
}

// Seat is one seat; Index is its bit in the availability snapshot and ID its
// catalog id (both assigned on import).
type Seat struct {
	ID     int64   `json:"id,omitempty"`
	Index  int     `json:"i"`
	Number int     `json:"n"`
	X      float32 `json:"x"`
	Y      float32 `json:"y"`
}

// SeatCount returns the number of reserved seats.
func (l *Layout) SeatCount() int {
	n := 0
	for _, s := range l.Sections {
		for _, r := range s.Rows {
			n += len(r.Seats)
		}
	}
	return n
}

// Validate checks a layout before import and numbers its seats densely.
// It reports every mistake (the first maxMistakes of them, each pointing
// at the value it concerns in the layout's JSON), so a venue fixes them all
// at once, as with a CSV seat list.
func (l *Layout) Validate() error {
	var m mistakes
	const nameCity = "Name (up to 200 characters) and city (up to 100) are required."
	const size = "Width and height must be between 1 and 100000."
	if text.Blank(l.Name) || text.Length(l.Name) > 200 {
		m.add("/name", nameCity)
	}
	if text.Blank(l.City) || text.Length(l.City) > 100 {
		m.add("/city", nameCity)
	}
	// Names, codes and labels are shown on maps, tickets and CSV exports.
	oneLine := func(pointer, what, s string) {
		if !text.OneLine(s) {
			m.add(pointer, "%s %q has a line break or control character; write it on one line.", what, s)
		}
	}
	oneLine("/name", "Name", l.Name)
	oneLine("/city", "City", l.City)
	if l.Country != "" && !country.MatchString(l.Country) {
		m.add("/country", "Country must be an ISO 3166 code of two capital letters, like BR.")
	}
	if l.Timezone != "" && (len(l.Timezone) > 64 || !zone.MatchString(l.Timezone)) {
		m.add("/timezone", "Timezone must be an IANA time zone name, like America/Sao_Paulo.")
	}
	if l.Width <= 0 || l.Width > 100000 {
		m.add("/width", size)
	}
	if l.Height <= 0 || l.Height > 100000 {
		m.add("/height", size)
	}
	if len(l.Sections) == 0 {
		m.add("/sections", "A layout needs at least one section.")
	}
	if len(l.Sections) > config.LayoutMaxSections {
		m.add("/sections", "A layout holds at most %d sections, not %d.", config.LayoutMaxSections, len(l.Sections))
	}
	codes := map[string]bool{}
	index := 0
	for i := range l.Sections {
		s := &l.Sections[i]
		at := func(path ...any) string { return reject.Pointer(append([]any{"sections", i}, path...)...) }
		if s.Code == "" || codes[s.Code] {
			m.add(at("code"), "Section %d: code must be present and unique.", i)
		}
		codes[s.Code] = true
		if s.PriceLevel == "" {
			m.add(at("price_level"), "Section %s: price_level is required.", s.Code)
		}
		if text.Length(s.Code) > 20 || text.Length(s.PriceLevel) > 20 || text.Length(s.Name) > 100 {
			m.add(at(), "Section %d: code and price_level must be at most 20 characters, name at most 100.", i)
		}
		oneLine(at("code"), fmt.Sprintf("Section %d: code", i), s.Code)
		oneLine(at("name"), fmt.Sprintf("Section %d: name", i), s.Name)
		oneLine(at("price_level"), fmt.Sprintf("Section %d: price_level", i), s.PriceLevel)
		if s.Name == "" {
			s.Name = s.Code
		}
		if s.Shape == nil {
			s.Shape = [][2]int{} // the map draws rows alone
		}
		if !fits(s.Rank) || !fits(s.Capacity) {
			m.add(at(), "Section %s: rank and capacity must be between 0 and %d.", s.Code, maxInt4)
		}
		switch s.Kind {
		case "standing":
			if s.Capacity <= 0 || len(s.Rows) > 0 {
				m.add(at(), "Standing section %s needs a positive capacity and no rows.", s.Code)
			}
		case "seated":
			if len(s.Rows) == 0 || s.Capacity != 0 {
				m.add(at(), "Seated section %s needs rows and no capacity.", s.Code)
			}
			if len(s.Rows) > config.LayoutMaxSectionRows {
				m.add(at("rows"), "Section %s has %d rows: a section holds at most %d; split it into sections.", s.Code, len(s.Rows), config.LayoutMaxSectionRows)
			}
			rows := map[string]bool{}
			for j, r := range s.Rows {
				if len(r.Seats) > config.LayoutMaxRowSeats {
					m.add(at("rows", j, "seats"), "Section %s row %s has %d seats: a row holds at most %d.", s.Code, r.Label, len(r.Seats), config.LayoutMaxRowSeats)
				}
				if r.Label == "" || rows[r.Label] || len(r.Seats) == 0 {
					m.add(at("rows", j), "Section %s: rows need unique labels and at least one seat.", s.Code)
				}
				rows[r.Label] = true
				oneLine(at("rows", j, "label"), fmt.Sprintf("Section %s: row %d label", s.Code, j), r.Label)
				if text.Length(r.Label) > 20 || !fits(r.Rank) {
					m.add(at("rows", j), "Section %s row %s: labels are at most 20 characters, ranks between 0 and %d.", s.Code, r.Label, maxInt4)
				}
				nums := map[int]bool{}
				for k := range r.Seats {
					if !fits(r.Seats[k].Number) {
						m.add(at("rows", j, "seats", k, "n"), "Section %s row %s: seat numbers must be between 0 and %d.", s.Code, r.Label, maxInt4)
					} else if nums[r.Seats[k].Number] {
						m.add(at("rows", j, "seats", k, "n"), "Section %s row %s: seat %d appears twice.", s.Code, r.Label, r.Seats[k].Number)
					}
					nums[r.Seats[k].Number] = true
					r.Seats[k].Index = index
					index++
				}
			}
		default:
			m.add(at("kind"), "Section %s: kind must be seated or standing.", s.Code)
		}
	}
	if index > config.LayoutMaxSeats {
		m.add("/sections", "A layout holds at most %d seats, not %d.", config.LayoutMaxSeats, index)
	}
	return m.err()
}

// country is an ISO 3166 alpha-2 code; zone is the shape of an IANA time
// zone name (Area/Location, up to two more parts, or a legacy name such as
// UTC or EST5EDT): the database itself is not checked, so a Lambda needs
// no tzdata for it.
var (
	country = regexp.MustCompile(`^[A-Z]{2}$`)
	zone    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$`)
)

// maxMistakes caps the mistakes a refused layout lists, as maxLineErrors
// does a seat list's.
const maxMistakes = maxLineErrors

// mistakes collects what is wrong with a layout.
type mistakes struct {
	reasons []reject.Reason
	total   int
}

func (m *mistakes) add(pointer, format string, a ...any) {
	m.total++
	if len(m.reasons) < maxMistakes {
		m.reasons = append(m.reasons, reject.Reason{Pointer: pointer, Detail: fmt.Sprintf(format, a...)})
	}
}

// err is the refusal, nil when nothing is wrong: one mistake is its own
// message; several are summed up by the first and a count.
func (m *mistakes) err() error {
	if m.total == 0 {
		return nil
	}
	r := &reject.Error{Kind: ErrInvalidLayout, Reasons: m.reasons}
	if m.total > 1 {
		listed := "each is listed in errors with where it is"
		if m.total > len(m.reasons) {
			listed = fmt.Sprintf("the first %d are listed in errors with where each is", len(m.reasons))
		}
		r.Summary = fmt.Sprintf("%s (and %d more mistakes: %s). Fix them all and send the layout again.",
			strings.TrimSuffix(m.reasons[0].Detail, "."), m.total-1, listed)
	}
	return r
}

// maxInt4 is the largest value of the catalog's INT columns.
const maxInt4 = 1<<31 - 1

func fits(n int) bool { return n >= 0 && n <= maxInt4 }

// Store reads and writes layouts in the catalog.
type Store struct{ db *pgxpool.Pool }

// NewStore returns a store on the catalog.
func NewStore(db *pgxpool.Pool) *Store { return &Store{db: db} }

// Owns fails with ErrNotFound when venueID does not exist or, for an
// organizer (owner > 0), is not theirs: another organizer's venue is
// answered as if it did not exist. Operators (owner 0) may use any venue.
func (s *Store) Owns(ctx context.Context, owner, venueID int64) error {
	return owns(ctx, s.db, owner, venueID)
}

func owns(ctx context.Context, q catalogstore.Reader, owner, venueID int64) error {
	current, found, err := catalogstore.VenueCreator(ctx, q, venueID)
	if err == nil && (!found || owner > 0 && (current == nil || *current != owner)) {
		return fmt.Errorf("venue %d: %w", venueID, ErrNotFound)
	}
	return err
}

// Import validates l and writes it as a new venue with layout version 1, or
// as the next version of venueID when venueID > 0. owner is the importing
// organizer (0: an operator): a new venue is theirs, and only they may add
// versions to it. It returns the stored layout with ids and seat indexes
// filled in.
func (s *Store) Import(ctx context.Context, owner, venueID int64, l Layout) (Layout, error) {
	if err := l.Validate(); err != nil {
		return Layout{}, err
	}
	if l.Country == "" {
		l.Country = "BR"
	}
	if l.Timezone == "" {
		l.Timezone = "America/Sao_Paulo"
	}
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		var createdBy *int64
		if owner > 0 {
			createdBy = &owner
		}
		if venueID > 0 {
			if err := owns(ctx, tx, owner, venueID); err != nil {
				return err
			}
		}
		if venueID == 0 {
			var err error
			if venueID, err = catalogstore.InsertVenue(ctx, tx, catalogstore.Venue{Name: l.Name, City: l.City, Country: l.Country,
				Timezone: l.Timezone, CreatedBy: createdBy}); err != nil {
				return fmt.Errorf("insert venue: %w", err)
			}
		}
		var err error
		if l.Version, err = catalogstore.InsertLayout(ctx, tx, venueID, l.Width, l.Height, l.SeatCount()); err != nil {
			return fmt.Errorf("insert layout of venue %d: %w", venueID, err)
		}
		l.VenueID = venueID
		for i := range l.Sections {
			sec := &l.Sections[i]
			sectionID, err := catalogstore.InsertSection(ctx, tx, venueID, l.Version, catalogstore.Section{Code: sec.Code, Name: sec.Name,
				Kind: sec.Kind, Rank: sec.Rank, PriceLevel: sec.PriceLevel, Capacity: sec.Capacity, Shape: sec.Shape})
			if err != nil {
				return fmt.Errorf("insert section %s: %w", sec.Code, err)
			}
			var seats []catalogstore.LayoutSeat
			for _, r := range sec.Rows {
				for _, st := range r.Seats {
					seats = append(seats, catalogstore.LayoutSeat{Index: st.Index, RowLabel: r.Label, RowRank: r.Rank, Number: st.Number, X: st.X, Y: st.Y})
				}
			}
			if len(seats) == 0 {
				continue
			}
			if err := catalogstore.InsertSeats(ctx, tx, sectionID, seats); err != nil {
				return fmt.Errorf("copy seats of section %s: %w", sec.Code, err)
			}
		}
		return nil
	})
	if err != nil {
		return Layout{}, err
	}
	return s.Load(ctx, l.VenueID, l.Version)
}

// Load reads a stored layout with seat ids.
func (s *Store) Load(ctx context.Context, venueID int64, version int) (Layout, error) {
	v, found, err := catalogstore.ReadLayout(ctx, s.db, venueID, version)
	if err != nil {
		return Layout{}, fmt.Errorf("load layout: %w", err)
	}
	if !found {
		return Layout{}, fmt.Errorf("venue %d layout %d: %w", venueID, version, ErrNotFound)
	}
	l := Layout{VenueID: venueID, Version: version, Name: v.Name, City: v.City, Country: v.Country, Timezone: v.Timezone, Width: v.Width, Height: v.Height}
	err = catalogstore.LayoutSeats(ctx, s.db, venueID, version, func(sec catalogstore.Section, seat *catalogstore.LayoutSeat) {
		if n := len(l.Sections); n == 0 || l.Sections[n-1].Code != sec.Code {
			l.Sections = append(l.Sections, Section{Code: sec.Code, Name: sec.Name, Kind: sec.Kind, Rank: sec.Rank,
				PriceLevel: sec.PriceLevel, Capacity: sec.Capacity, Shape: sec.Shape})
		}
		if seat == nil {
			return
		}
		cur := &l.Sections[len(l.Sections)-1]
		if n := len(cur.Rows); n == 0 || cur.Rows[n-1].Label != seat.RowLabel {
			cur.Rows = append(cur.Rows, Row{Label: seat.RowLabel, Rank: seat.RowRank})
		}
		r := &cur.Rows[len(cur.Rows)-1]
		r.Seats = append(r.Seats, Seat{ID: seat.ID, Index: seat.Index, Number: seat.Number, X: seat.X, Y: seat.Y})
	})
	if err != nil {
		return Layout{}, fmt.Errorf("load sections: %w", err)
	}
	return l, nil
}

// Venue is a venue with its layout versions, as its organizer lists them.
type Venue struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	City     string    `json:"city"`
	Versions []Version `json:"versions"`
}

// Version summarises one layout version.
type Version struct {
	Version   int       `json:"version"`
	SeatCount int       `json:"seat_count"`
	CreatedAt time.Time `json:"created_at"`
}

// Owned lists an organizer's venues with their versions, newest venue
// first; venueID > 0 narrows it to that venue (none when it is not theirs).
func (s *Store) Owned(ctx context.Context, owner, venueID int64) ([]Venue, error) {
	versions, err := catalogstore.VenueVersions(ctx, s.db, owner, venueID)
	if err != nil {
		return nil, fmt.Errorf("venues of %d: %w", owner, err)
	}
	out := []Venue{}
	for _, r := range versions {
		if n := len(out); n == 0 || out[n-1].ID != r.VenueID {
			out = append(out, Venue{ID: r.VenueID, Name: r.Name, City: r.City})
		}
		last := &out[len(out)-1]
		last.Versions = append(last.Versions, Version{Version: r.Version, SeatCount: r.SeatCount, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// Named returns a venue's name and city (a new version's CSV may leave
// them out).
func (s *Store) Named(ctx context.Context, venueID int64) (name, city string, err error) {
	name, city, found, err := catalogstore.VenueName(ctx, s.db, venueID)
	if err == nil && !found {
		return "", "", fmt.Errorf("venue %d: %w", venueID, ErrNotFound)
	}
	return name, city, err
}

// ExistingSeats returns those of ids that are seats of some venue's layout
// (a hold naming a seat of another venue is told from one naming nothing).
func (s *Store) ExistingSeats(ctx context.Context, ids []int64) ([]int64, error) {
	return catalogstore.ExistingSeats(ctx, s.db, ids)
}
