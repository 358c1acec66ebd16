package catalogstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// EventStamps calls fn with the id and update time of every event updated
// after since.
func EventStamps(ctx context.Context, db Reader, since time.Time, fn func(id int64, updated time.Time)) error {
	rows, err := db.Query(ctx, `SELECT id, updated_at FROM events WHERE updated_at > $1`, since)
	if err != nil {
		return err
	}
	var id int64
	var updated time.Time
	_, err = pgx.ForEachRow(rows, []any{&id, &updated}, func() error {
		fn(id, updated)
		return nil
	})
	return err
}

// SearchWords returns the search vocabulary (catalog migration 00005).
func SearchWords(ctx context.Context, db Reader) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT word FROM search_words`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SearchRow is an event as search sees it.
type SearchRow struct {
	ID                                          int64
	StartsAt, SaleStartsAt, SaleEndsAt, Updated time.Time
	Listed, OnSale                              bool // not a draft; status on_sale
	Opening                                     bool // scheduled or on sale: its sale may still open
	City, Category                              string
	Vector                                      string // search_vec as text
}

// SearchRows calls fn with the events of ids (all events when ids is nil)
// as search sees them, until fn returns false.
func SearchRows(ctx context.Context, db Reader, ids []int64, fn func(SearchRow) (bool, error)) error {
	q := `SELECT e.id, e.starts_at, e.sale_starts_at, e.sale_ends_at, e.updated_at, e.status <> 'draft', e.status = 'on_sale',
		e.status IN ('scheduled', 'on_sale'), e.city, e.category, e.search_vec::text FROM events e`
	var args []any
	if ids != nil {
		q += ` WHERE e.id = ANY($1)`
		args = append(args, ids)
	}
	rows, err := db.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var r SearchRow
		if err := rows.Scan(&r.ID, &r.StartsAt, &r.SaleStartsAt, &r.SaleEndsAt, &r.Updated, &r.Listed, &r.OnSale, &r.Opening, &r.City, &r.Category, &r.Vector); err != nil {
			return err
		}
		more, err := fn(r)
		if err != nil || !more {
			return err
		}
	}
	return rows.Err()
}
