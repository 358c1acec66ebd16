package catalogstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrEmailTaken means another account has the email (in any case).
var ErrEmailTaken = errors.New("email taken")

// Account is a row of accounts.
type Account struct {
	ID           int64
	Email        string
	Name         string
	Role         string
	CreatedAt    time.Time
	PasswordHash string
	// EmailVerified: the owner opened the link mailed at sign-up.
	EmailVerified bool
}

// CreateAccount inserts an account and returns its id and creation time.
func CreateAccount(ctx context.Context, db DB, a Account) (int64, time.Time, error) {
	err := db.QueryRow(ctx, `
		INSERT INTO accounts (email, password_hash, name, role) VALUES ($1, $2, $3, $4)
		RETURNING id, created_at`, a.Email, a.PasswordHash, a.Name, a.Role).Scan(&a.ID, &a.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return 0, time.Time{}, ErrEmailTaken
	}
	return a.ID, a.CreatedAt, err
}

// LoginAccount finds an account by email, ignoring case, with its password
// hash. An unknown email reads the same: one row (of NULLs), so the
// database answers both alike and a log-in's time tells nothing.
func LoginAccount(ctx context.Context, db DB, email string) (a Account, found bool, err error) {
	var (
		id                      *int64
		address, name, role, pw *string
		created                 *time.Time
		verified                *bool
	)
	err = db.QueryRow(ctx, `
		SELECT a.id, a.email, a.name, a.role, a.created_at, a.password_hash, a.email_verified_at IS NOT NULL
		FROM (SELECT) one LEFT JOIN accounts a ON lower(a.email) = lower($1)`, email).Scan(&id, &address, &name, &role, &created, &pw, &verified)
	if err != nil || id == nil {
		return Account{}, false, err
	}
	return Account{ID: *id, Email: *address, Name: *name, Role: *role, CreatedAt: *created, PasswordHash: *pw, EmailVerified: *verified}, true, nil
}

// VerifyEmail marks an account's email verified (the first time counts)
// and returns the account; found is false when there is no such account.
func VerifyEmail(ctx context.Context, db DB, id int64) (a Account, found bool, err error) {
	err = db.QueryRow(ctx, `UPDATE accounts SET email_verified_at = coalesce(email_verified_at, now()) WHERE id = $1
		RETURNING id, email, name, role, created_at`, id).Scan(&a.ID, &a.Email, &a.Name, &a.Role, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, false, nil
	}
	a.EmailVerified = true
	return a, err == nil, err
}

// AccountRole returns an account's role, or "" when there is no such account.
func AccountRole(ctx context.Context, db DB, id int64) (string, error) {
	var role string
	err := db.QueryRow(ctx, `SELECT role FROM accounts WHERE id = $1`, id).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return role, err
}

// SetAccountRole changes an account's role; found is false when there is
// no such account.
func SetAccountRole(ctx context.Context, db DB, id int64, role string) (found bool, err error) {
	tag, err := db.Exec(ctx, `UPDATE accounts SET role = $2 WHERE id = $1`, id, role)
	return tag.RowsAffected() > 0, err
}

// AccountEmail returns an account's email address.
func AccountEmail(ctx context.Context, db DB, id int64) (string, error) {
	var email string
	return email, db.QueryRow(ctx, `SELECT email FROM accounts WHERE id = $1`, id).Scan(&email)
}

// AccountByEmail finds the account with an email address, ignoring case
// (found is false when there is none); its password hash is not read.
func AccountByEmail(ctx context.Context, db DB, email string) (a Account, found bool, err error) {
	err = db.QueryRow(ctx, `SELECT id, name, email FROM accounts WHERE lower(email) = lower($1)`, email).Scan(&a.ID, &a.Name, &a.Email)
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, false, nil
	}
	return a, err == nil, err
}

// Accounts reads the accounts of ids (id, name, email), by id; unknown ids
// are left out.
func Accounts(ctx context.Context, db DB, ids []int64) (map[int64]Account, error) {
	rows, err := db.Query(ctx, `SELECT id, name, email FROM accounts WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]Account, len(ids))
	var a Account
	_, err = pgx.ForEachRow(rows, []any{&a.ID, &a.Name, &a.Email}, func() error {
		out[a.ID] = a
		return nil
	})
	return out, err
}
