// Package pgstore keeps accounts in the catalog database.
package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/catalogstore"
)

// Store implements account.Store.
type Store struct{ db *pgxpool.Pool }

// New returns a store on the catalog pool.
func New(db *pgxpool.Pool) *Store { return &Store{db: db} }

// Create inserts an account; a duplicate email (any case) is ErrEmailTaken.
func (s *Store) Create(ctx context.Context, a account.Account, hash string) (account.Account, error) {
	var err error
	a.ID, a.CreatedAt, err = catalogstore.CreateAccount(ctx, s.db, catalogstore.Account{Email: a.Email, PasswordHash: hash, Name: a.Name, Role: a.Role})
	if errors.Is(err, catalogstore.ErrEmailTaken) {
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
	a, found, err := catalogstore.LoginAccount(ctx, s.db, email)
	if err != nil {
		return account.Account{}, "", fmt.Errorf("find account by email: %w", err)
	}
	if !found {
		return account.Account{}, "", account.ErrInvalidCredentials
	}
	return account.Account{ID: a.ID, Email: a.Email, Name: a.Name, Role: a.Role, CreatedAt: a.CreatedAt, EmailVerified: a.EmailVerified}, a.PasswordHash, nil
}

// VerifyEmail marks an account's email verified; an unknown account is
// account.ErrNoAccount.
func (s *Store) VerifyEmail(ctx context.Context, id int64) (account.Account, error) {
	a, found, err := catalogstore.VerifyEmail(ctx, s.db, id)
	if err != nil {
		return account.Account{}, fmt.Errorf("verify email of account %d: %w", id, err)
	}
	if !found {
		return account.Account{}, account.ErrNoAccount
	}
	return account.Account{ID: a.ID, Email: a.Email, Name: a.Name, Role: a.Role, CreatedAt: a.CreatedAt, EmailVerified: true}, nil
}

// Role returns an account's role, or "" when there is no such account.
func (s *Store) Role(ctx context.Context, id int64) (string, error) {
	role, err := catalogstore.AccountRole(ctx, s.db, id)
	if err != nil {
		return "", fmt.Errorf("role of account %d: %w", id, err)
	}
	return role, nil
}

// SetRole changes an account's role (organizer promotion is an operator task).
func (s *Store) SetRole(ctx context.Context, id int64, role string) error {
	found, err := catalogstore.SetAccountRole(ctx, s.db, id, role)
	if err != nil {
		return fmt.Errorf("set role of account %d: %w", id, err)
	}
	if !found {
		return fmt.Errorf("account %d not found", id)
	}
	return nil
}

// Email returns an account's address.
func (s *Store) Email(ctx context.Context, id int64) (string, error) {
	return catalogstore.AccountEmail(ctx, s.db, id)
}
