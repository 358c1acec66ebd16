// Package pgstore keeps accounts in the catalog database.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/account"
)

// Store implements account.Store.
type Store struct{ db *pgxpool.Pool }

// New returns a store on the catalog pool.
func New(db *pgxpool.Pool) *Store { return &Store{db: db} }

// Create inserts an account; a duplicate email (any case) is ErrEmailTaken.
func (s *Store) Create(ctx context.Context, a account.Account, hash string) (account.Account, error) {
	err := s.db.QueryRow(ctx, `
		INSERT INTO accounts (email, password_hash, name, role) VALUES ($1, $2, $3, $4)
		RETURNING id, created_at`, a.Email, hash, a.Name, a.Role).Scan(&a.ID, &a.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return account.Account{}, account.ErrEmailTaken
	}
	if err != nil {
		return account.Account{}, fmt.Errorf("insert account: %w", err)
	}
	return a, nil
}

// ByEmail finds an account and its password hash by email, ignoring case.
// An unknown email reads the same: one row (of NULLs), so the database
// answers both alike and a log-in's time tells nothing.
func (s *Store) ByEmail(ctx context.Context, email string) (account.Account, string, error) {
	var (
		id                      *int64
		address, name, role, pw *string
		created                 *time.Time
	)
	err := s.db.QueryRow(ctx, `
		SELECT a.id, a.email, a.name, a.role, a.created_at, a.password_hash
		FROM (SELECT) one LEFT JOIN accounts a ON lower(a.email) = lower($1)`, email).Scan(&id, &address, &name, &role, &created, &pw)
	if err != nil {
		return account.Account{}, "", fmt.Errorf("find account by email: %w", err)
	}
	if id == nil {
		return account.Account{}, "", account.ErrInvalidCredentials
	}
	return account.Account{ID: *id, Email: *address, Name: *name, Role: *role, CreatedAt: *created}, *pw, nil
}

// Role returns an account's role, or "" when there is no such account.
func (s *Store) Role(ctx context.Context, id int64) (string, error) {
	var role string
	err := s.db.QueryRow(ctx, `SELECT role FROM accounts WHERE id = $1`, id).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("role of account %d: %w", id, err)
	}
	return role, nil
}

// SetRole changes an account's role (organizer promotion is an operator task).
func (s *Store) SetRole(ctx context.Context, id int64, role string) error {
	tag, err := s.db.Exec(ctx, `UPDATE accounts SET role = $2 WHERE id = $1`, id, role)
	if err != nil {
		return fmt.Errorf("set role of account %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("account %d not found", id)
	}
	return nil
}
