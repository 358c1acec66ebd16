package catalogstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// SetEventStatus sets an event's status; found is false when there is no
// such event.
func SetEventStatus(ctx context.Context, db DB, id int64, status string) (found bool, err error) {
	tag, err := db.Exec(ctx, `UPDATE events SET status = $2, updated_at = now() WHERE id = $1`, id, status)
	return tag.RowsAffected() > 0, err
}

// EventShard returns the shard of an event; found is false when there is
// no such event.
func EventShard(ctx context.Context, db DB, id int64) (shard int, found bool, err error) {
	err = db.QueryRow(ctx, `SELECT shard_id FROM events WHERE id = $1`, id).Scan(&shard)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return shard, err == nil, err
}

// ShardLoads returns, by shard, the places (seats and standing capacity)
// of the events that have not yet happened and are not cancelled.
func ShardLoads(ctx context.Context, db DB) (map[int]int64, error) {
	rows, err := db.Query(ctx, `
		SELECT e.shard_id, sum(l.seat_count + coalesce(ga.capacity, 0))
		FROM events e
		JOIN venue_layouts l ON l.venue_id = e.venue_id AND l.version = e.layout_version
		LEFT JOIN LATERAL (
			SELECT sum(capacity) AS capacity FROM layout_sections s
			WHERE s.venue_id = e.venue_id AND s.version = e.layout_version AND s.kind = 'standing'
		) ga ON true
		WHERE e.starts_at > now() AND e.status <> 'cancelled'
		GROUP BY e.shard_id`)
	if err != nil {
		return nil, err
	}
	load := map[int]int64{}
	var id int
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&id, &n}, func() error {
		load[id] = n
		return nil
	})
	return load, err
}

// EventOwner returns the account that created an event if its role is
// role now (0 otherwise) and whether the event is cancelled; lock takes
// the event row's lock (FOR UPDATE) in db, a transaction. found is false
// when there is no such event.
func EventOwner(ctx context.Context, db DB, id int64, role string, lock bool) (owner int64, cancelled, found bool, err error) {
	q := `SELECT coalesce(a.id, 0), e.status = 'cancelled' FROM events e
		LEFT JOIN accounts a ON a.id = e.created_by AND a.role = $2 WHERE e.id = $1`
	if lock {
		q += ` FOR UPDATE OF e`
	}
	err = db.QueryRow(ctx, q, id, role).Scan(&owner, &cancelled)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, false, nil
	}
	return owner, cancelled, err == nil, err
}

// TransferTerms reads what a transfer of a ticket of an event depends on:
// whether the event is cancelled and its per-account limit. found is false
// when there is no such event.
func TransferTerms(ctx context.Context, db DB, id int64) (cancelled bool, limit int, found bool, err error) {
	err = db.QueryRow(ctx, `SELECT status = 'cancelled', max_per_account FROM events WHERE id = $1`, id).Scan(&cancelled, &limit)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, 0, false, nil
	}
	return cancelled, limit, err == nil, err
}

// EventZone is the time zone name of an event's venue.
func EventZone(ctx context.Context, db DB, id int64) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT v.timezone FROM events e JOIN venues v ON v.id = e.venue_id WHERE e.id = $1`, id).Scan(&name)
	return name, err
}

// EventPlace is an event's name, start and venue.
type EventPlace struct {
	ID          int64
	Name        string
	StartsAt    time.Time
	Venue, City string
}

// UpcomingEvents reads the events of ids not cancelled that start after
// after, soonest first.
func UpcomingEvents(ctx context.Context, db DB, ids []int64, after time.Time) ([]EventPlace, error) {
	rows, err := db.Query(ctx, `SELECT e.id, e.name, e.starts_at, v.name, v.city FROM events e JOIN venues v ON v.id = e.venue_id
		WHERE e.id = ANY($1) AND e.status <> 'cancelled' AND e.starts_at > $2 ORDER BY e.starts_at, e.id`, ids, after)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[EventPlace])
}

// EventName is an event's name and start.
type EventName struct {
	Name     string
	StartsAt time.Time
}

// EventNames reads the names and starts of the events of ids, by id.
func EventNames(ctx context.Context, db DB, ids []int64) (map[int64]EventName, error) {
	rows, err := db.Query(ctx, `SELECT id, name, starts_at FROM events WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]EventName, len(ids))
	var id int64
	var e EventName
	_, err = pgx.ForEachRow(rows, []any{&id, &e.Name, &e.StartsAt}, func() error {
		out[id] = e
		return nil
	})
	return out, err
}
