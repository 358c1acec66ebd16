package catalogstore

import "context"

// SetEventStatus sets an event's status; found is false when there is no
// such event.
func SetEventStatus(ctx context.Context, db DB, id int64, status string) (found bool, err error) {
	tag, err := db.Exec(ctx, `UPDATE events SET status = $2, updated_at = now() WHERE id = $1`, id, status)
	return tag.RowsAffected() > 0, err
}
