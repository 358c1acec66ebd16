package catalogstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/catraca/catraca/shared/outbox"
)

// Presale is a row of presales: an event's registration and its draw.
type Presale struct {
	EventID              int64
	RegistrationOpensAt  time.Time
	RegistrationClosesAt time.Time
	Codes                int
	SaleEndsAt           time.Time
	Seed                 []byte
	Commitment           string
	DrawnAt              *time.Time
	CreatedBy            int64
}

// PresaleRegistration is a row of presale_registrations.
type PresaleRegistration struct {
	ID           string
	EventID      int64
	AccountID    int64
	ClusterID    int64
	RegisteredAt time.Time
	Won          *bool
	Code         *string
	RedeemedAt   *time.Time
}

const presaleColumns = `event_id, registration_opens_at, registration_closes_at, codes, sale_ends_at, seed, commitment, drawn_at, created_by`

func scanPresale(row pgx.Row) (p Presale, found bool, err error) {
	err = row.Scan(&p.EventID, &p.RegistrationOpensAt, &p.RegistrationClosesAt, &p.Codes, &p.SaleEndsAt,
		&p.Seed, &p.Commitment, &p.DrawnAt, &p.CreatedBy)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, false, nil
	}
	return p, err == nil, err
}

// CreatePresale inserts an event's presale; created is false when the
// event already has one (a presale is opened once: its commitment is
// public from then on and may not change).
func CreatePresale(ctx context.Context, db DB, p Presale) (created bool, err error) {
	tag, err := db.Exec(ctx, `INSERT INTO presales (`+presaleColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8)
		ON CONFLICT (event_id) DO NOTHING`,
		p.EventID, p.RegistrationOpensAt, p.RegistrationClosesAt, p.Codes, p.SaleEndsAt, p.Seed, p.Commitment, p.CreatedBy)
	return tag.RowsAffected() == 1, err
}

// GetPresale reads an event's presale; lock takes its row FOR UPDATE (the
// draw, so that two draws of one presale run one after the other).
func GetPresale(ctx context.Context, db DB, eventID int64, lock bool) (Presale, bool, error) {
	q := `SELECT ` + presaleColumns + ` FROM presales WHERE event_id = $1`
	if lock {
		q += ` FOR UPDATE`
	}
	return scanPresale(db.QueryRow(ctx, q, eventID))
}

// PresalesToDraw lists the events whose registration closed before now
// and whose draw has not run.
func PresalesToDraw(ctx context.Context, db Reader, now time.Time) ([]int64, error) {
	rows, err := db.Query(ctx, `SELECT event_id FROM presales WHERE drawn_at IS NULL AND registration_closes_at <= $1 ORDER BY event_id`, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// PresalesSelling lists the presales whose sale has not ended by now.
func PresalesSelling(ctx context.Context, db Reader, now time.Time) ([]Presale, error) {
	rows, err := db.Query(ctx, `SELECT `+presaleColumns+` FROM presales WHERE sale_ends_at > $1 ORDER BY event_id`, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Presale, error) {
		p, _, err := scanPresale(r)
		return p, err
	})
}

// MarkPresaleDrawn records the draw's time.
func MarkPresaleDrawn(ctx context.Context, db DB, eventID int64, at time.Time) error {
	_, err := db.Exec(ctx, `UPDATE presales SET drawn_at = $2 WHERE event_id = $1`, eventID, at)
	return err
}

// ErrDuplicate is a unique violation: the row exists.
var ErrDuplicate = errors.New("catalogstore: duplicate")

// InsertPresaleRegistration registers an account; ErrDuplicate when the
// account or its cluster is already registered for the event.
func InsertPresaleRegistration(ctx context.Context, db DB, r PresaleRegistration) (time.Time, error) {
	var at time.Time
	err := db.QueryRow(ctx, `INSERT INTO presale_registrations (id, event_id, account_id, cluster_id)
		VALUES ($1, $2, $3, $4) RETURNING registered_at`, r.ID, r.EventID, r.AccountID, r.ClusterID).Scan(&at)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return at, ErrDuplicate
	}
	return at, err
}

const registrationColumns = `id, event_id, account_id, cluster_id, registered_at, won, code, redeemed_at`

func scanRegistration(row pgx.Row) (r PresaleRegistration, err error) {
	err = row.Scan(&r.ID, &r.EventID, &r.AccountID, &r.ClusterID, &r.RegisteredAt, &r.Won, &r.Code, &r.RedeemedAt)
	return r, err
}

// PresaleRegistrationOf reads an account's registration for an event.
func PresaleRegistrationOf(ctx context.Context, db Reader, eventID, account int64) (PresaleRegistration, bool, error) {
	r, err := scanRegistration(db.QueryRow(ctx, `SELECT `+registrationColumns+`
		FROM presale_registrations WHERE event_id = $1 AND account_id = $2`, eventID, account))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// PresaleRegistrationIDs lists an event's registration ids, sorted
// bytewise (COLLATE "C"), as the draw takes them.
func PresaleRegistrationIDs(ctx context.Context, db Reader, eventID int64) ([]string, error) {
	rows, err := db.Query(ctx, `SELECT id FROM presale_registrations WHERE event_id = $1 ORDER BY id COLLATE "C"`, eventID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// PresaleCounts counts an event's registrations, winners and redeemed
// codes.
func PresaleCounts(ctx context.Context, db Reader, eventID int64) (registered, won, redeemed int, err error) {
	err = db.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE won), count(redeemed_at)
		FROM presale_registrations WHERE event_id = $1`, eventID).Scan(&registered, &won, &redeemed)
	return
}

// SetPresaleWinner gives a registration not drawn yet its code; a
// registration drawn already is an error (a second draw must never hand
// out other codes).
func SetPresaleWinner(ctx context.Context, db DB, id, code string) error {
	tag, err := db.Exec(ctx, `UPDATE presale_registrations SET won = true, code = $2 WHERE id = $1 AND won IS NULL`, id, code)
	if err == nil && tag.RowsAffected() != 1 {
		err = errors.New("catalogstore: presale registration " + id + " was drawn already")
	}
	return err
}

// SetPresaleLosers marks every registration of the event without a code
// as not drawn.
func SetPresaleLosers(ctx context.Context, db DB, eventID int64) error {
	_, err := db.Exec(ctx, `UPDATE presale_registrations SET won = false WHERE event_id = $1 AND won IS NULL`, eventID)
	return err
}

// TopicPresaleMail is the catalog outbox's message that one registration
// of a drawn presale is to be told its outcome: its payload is
// PresaleMailMessage.
const TopicPresaleMail outbox.Topic = "presale.mail"

// PresaleMailMessage names the registration a presale.mail message is for.
type PresaleMailMessage struct {
	Registration string `json:"registration"`
}

// EnqueuePresaleMails writes one presale.mail message per registration of
// the event into the catalog's outbox, committed with db's transaction
// (the draw's): whoever draws, the fulfil function mails.
func EnqueuePresaleMails(ctx context.Context, db DB, eventID int64) error {
	_, err := db.Exec(ctx, `INSERT INTO outbox (topic, payload)
		SELECT $2, jsonb_build_object('registration', id) FROM presale_registrations WHERE event_id = $1 ORDER BY id`,
		eventID, TopicPresaleMail)
	return err
}

// PresaleMail is what the mail of a drawn registration says, and whether
// it was sent already.
type PresaleMail struct {
	ID         string
	EventID    int64
	EventName  string
	Won        bool
	Code       string
	Email      string
	SaleEndsAt time.Time
	Mailed     bool
}

// PresaleMailOf reads a drawn registration's mail: its outcome, its
// account's address and when the presale ends.
func PresaleMailOf(ctx context.Context, db Reader, id string) (PresaleMail, error) {
	var m PresaleMail
	err := db.QueryRow(ctx, `SELECT r.id, r.event_id, e.name, r.won, coalesce(r.code, ''), a.email, p.sale_ends_at, r.mailed_at IS NOT NULL
		FROM presale_registrations r JOIN presales p ON p.event_id = r.event_id JOIN events e ON e.id = r.event_id
		JOIN accounts a ON a.id = r.account_id WHERE r.id = $1 AND r.won IS NOT NULL`, id).
		Scan(&m.ID, &m.EventID, &m.EventName, &m.Won, &m.Code, &m.Email, &m.SaleEndsAt, &m.Mailed)
	return m, err
}

// MarkPresaleMailed records that a winner was mailed.
func MarkPresaleMailed(ctx context.Context, db DB, id string) error {
	_, err := db.Exec(ctx, `UPDATE presale_registrations SET mailed_at = now() WHERE id = $1`, id)
	return err
}

// PresaleCode reads the registration holding a code of an event.
func PresaleCode(ctx context.Context, db Reader, eventID int64, code string) (PresaleRegistration, bool, error) {
	r, err := scanRegistration(db.QueryRow(ctx, `SELECT `+registrationColumns+`
		FROM presale_registrations WHERE event_id = $1 AND code = $2`, eventID, code))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, false, nil
	}
	return r, err == nil, err
}

// RedeemPresaleCode marks a code used by its own account, once; redeemed
// is false when it was already.
func RedeemPresaleCode(ctx context.Context, db DB, id string) (redeemed bool, err error) {
	tag, err := db.Exec(ctx, `UPDATE presale_registrations SET redeemed_at = now() WHERE id = $1 AND redeemed_at IS NULL`, id)
	return tag.RowsAffected() == 1, err
}

// PresaleRedeemers lists the accounts that redeemed a code of an event.
func PresaleRedeemers(ctx context.Context, db Reader, eventID int64) ([]int64, error) {
	rows, err := db.Query(ctx, `SELECT account_id FROM presale_registrations WHERE event_id = $1 AND redeemed_at IS NOT NULL ORDER BY account_id`, eventID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// LockPresaleShared reads an event's presale FOR SHARE: registrations
// hold it side by side, and the draw's FOR UPDATE waits for them.
func LockPresaleShared(ctx context.Context, db DB, eventID int64) (Presale, bool, error) {
	return scanPresale(db.QueryRow(ctx, `SELECT `+presaleColumns+` FROM presales WHERE event_id = $1 FOR SHARE`, eventID))
}
