package catalogstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// ExistingSeats returns those of ids that are seats of some venue's layout.
func ExistingSeats(ctx context.Context, db Reader, ids []int64) ([]int64, error) {
	rows, err := db.Query(ctx, `SELECT id FROM layout_seats WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// VenueCreator returns who created a venue (nil: an operator); found is
// false when there is no such venue.
func VenueCreator(ctx context.Context, db Reader, id int64) (creator *int64, found bool, err error) {
	err = db.QueryRow(ctx, `SELECT created_by FROM venues WHERE id = $1`, id).Scan(&creator)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	return creator, err == nil, err
}

// Venue is a row of venues.
type Venue struct {
	ID                            int64
	Name, City, Country, Timezone string
	CreatedBy                     *int64
}

// InsertVenue inserts a venue and returns its id.
func InsertVenue(ctx context.Context, db DB, v Venue) (int64, error) {
	err := db.QueryRow(ctx, `INSERT INTO venues (name, city, country, timezone, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		v.Name, v.City, v.Country, v.Timezone, v.CreatedBy).Scan(&v.ID)
	return v.ID, err
}

// InsertLayout inserts the next layout version of a venue and returns it.
func InsertLayout(ctx context.Context, db DB, venueID int64, width, height, seatCount int) (version int, err error) {
	err = db.QueryRow(ctx, `
		INSERT INTO venue_layouts (venue_id, version, width, height, seat_count)
		SELECT $1, coalesce(max(version), 0) + 1, $2, $3, $4 FROM venue_layouts WHERE venue_id = $1
		RETURNING version`, venueID, width, height, seatCount).Scan(&version)
	return version, err
}

// Section is a row of layout_sections.
type Section struct {
	Code, Name, Kind string
	Rank             int
	PriceLevel       string
	Capacity         int
	Shape            [][2]int
}

// LayoutSeat is a row of layout_seats.
type LayoutSeat struct {
	ID       int64
	Index    int
	RowLabel string
	RowRank  int
	Number   int
	X, Y     float32
}

// InsertSection inserts a section of a layout version and returns its id.
func InsertSection(ctx context.Context, db DB, venueID int64, version int, s Section) (int64, error) {
	var id int64
	err := db.QueryRow(ctx, `
		INSERT INTO layout_sections (venue_id, version, code, name, kind, rank, price_level, capacity, shape)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		venueID, version, s.Code, s.Name, s.Kind, s.Rank, s.PriceLevel, s.Capacity, s.Shape).Scan(&id)
	return id, err
}

// InsertSeats copies the seats of a section into layout_seats, in tx.
func InsertSeats(ctx context.Context, tx pgx.Tx, sectionID int64, seats []LayoutSeat) error {
	rows := make([][]any, len(seats))
	for i, st := range seats {
		rows[i] = []any{sectionID, st.Index, st.RowLabel, st.RowRank, st.Number, st.X, st.Y}
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"layout_seats"},
		[]string{"section_id", "seat_index", "row_label", "row_rank", "number", "x", "y"}, pgx.CopyFromRows(rows))
	return err
}

// Layout is a layout version with its venue.
type Layout struct {
	Venue
	Width, Height int
}

// ReadLayout reads a layout version's venue and size; found is false when
// there is no such version.
func ReadLayout(ctx context.Context, db Reader, venueID int64, version int) (l Layout, found bool, err error) {
	err = db.QueryRow(ctx, `
		SELECT v.name, v.city, v.country, v.timezone, l.width, l.height
		FROM venue_layouts l JOIN venues v ON v.id = l.venue_id
		WHERE l.venue_id = $1 AND l.version = $2`, venueID, version).Scan(&l.Name, &l.City, &l.Country, &l.Timezone, &l.Width, &l.Height)
	if errors.Is(err, pgx.ErrNoRows) {
		return Layout{}, false, nil
	}
	l.ID = venueID
	return l, err == nil, err
}

// LayoutSeats calls fn with every section of a layout version and each of
// its seats in order (seat nil for a section without seats).
func LayoutSeats(ctx context.Context, db Reader, venueID int64, version int, fn func(Section, *LayoutSeat)) error {
	rows, err := db.Query(ctx, `
		SELECT s.code, s.name, s.kind, s.rank, s.price_level, s.capacity, s.shape,
		       st.id, st.seat_index, st.row_label, st.row_rank, st.number, st.x, st.y
		FROM layout_sections s
		LEFT JOIN layout_seats st ON st.section_id = s.id
		WHERE s.venue_id = $1 AND s.version = $2
		ORDER BY s.id, st.seat_index`, venueID, version)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var sec Section
		var seatID *int64
		var idx, rowRank, number *int
		var rowLabel *string
		var x, y *float32
		if err := rows.Scan(&sec.Code, &sec.Name, &sec.Kind, &sec.Rank, &sec.PriceLevel, &sec.Capacity, &sec.Shape,
			&seatID, &idx, &rowLabel, &rowRank, &number, &x, &y); err != nil {
			return err
		}
		if seatID == nil {
			fn(sec, nil)
			continue
		}
		fn(sec, &LayoutSeat{ID: *seatID, Index: *idx, RowLabel: *rowLabel, RowRank: *rowRank, Number: *number, X: *x, Y: *y})
	}
	return rows.Err()
}

// VenueVersion is a layout version of a venue, as its organizer lists it.
type VenueVersion struct {
	VenueID   int64
	Name      string
	City      string
	Version   int
	SeatCount int
	CreatedAt time.Time
}

// VenueVersions lists the layout versions of an organizer's venues,
// newest venue then newest version first; venueID > 0 narrows it to that
// venue.
func VenueVersions(ctx context.Context, db Reader, owner, venueID int64) ([]VenueVersion, error) {
	rows, err := db.Query(ctx, `
		SELECT v.id, v.name, v.city, l.version, l.seat_count, l.created_at
		FROM venues v JOIN venue_layouts l ON l.venue_id = v.id
		WHERE v.created_by = $1 AND ($2::bigint = 0 OR v.id = $2)
		ORDER BY v.id DESC, l.version DESC`, owner, venueID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (VenueVersion, error) {
		var v VenueVersion
		return v, r.Scan(&v.VenueID, &v.Name, &v.City, &v.Version, &v.SeatCount, &v.CreatedAt)
	})
}

// VenueName returns a venue's name and city; found is false when there is
// no such venue.
func VenueName(ctx context.Context, db Reader, id int64) (name, city string, found bool, err error) {
	err = db.QueryRow(ctx, `SELECT name, city FROM venues WHERE id = $1`, id).Scan(&name, &city)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	return name, city, err == nil, err
}
