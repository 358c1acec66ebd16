package fairness

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/catalogstore"
)

// Block is an account an organizer blocked.
type Block struct {
	By     int64     `json:"by"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
}

// Entry is one line of the audit log: who did what to which account (and
// order), when, why, and the evidence shown when they did.
type Entry struct {
	ID       int64           `json:"id"`
	At       time.Time       `json:"at"`
	Actor    int64           `json:"actor"`
	Action   string          `json:"action"`
	Account  int64           `json:"account"`
	OrderID  *int64          `json:"order_id,omitempty"`
	Reason   string          `json:"reason"`
	Evidence json.RawMessage `json:"evidence"`
}

// Actions in the audit log.
const (
	ActionBlock   = "block"
	ActionUnblock = "unblock"
	ActionVoid    = "void"
)

// Block blocks account (no log-in, hold or checkout) and logs it. The
// Redis copy is what sessions check; it is written after the catalog
// commits, and an error asks the organizer to try again (blocking twice
// changes nothing but the log).
func (s *Service) Block(ctx context.Context, actor, account int64, reason string, evidence any) error {
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if err := catalogstore.BlockAccount(ctx, tx, account, actor, reason); err != nil {
			return err
		}
		return audit(ctx, tx, actor, ActionBlock, account, nil, reason, evidence)
	})
	if err != nil {
		return err
	}
	return s.redis.Set(ctx, BlockedKey(s.prefix, account), actor, 0).Err()
}

// Unblock lifts a block (the appeal: docs/fairness.md) and logs it.
func (s *Service) Unblock(ctx context.Context, actor, account int64, reason string) error {
	err := pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if err := catalogstore.UnblockAccount(ctx, tx, account); err != nil {
			return err
		}
		return audit(ctx, tx, actor, ActionUnblock, account, nil, reason, nil)
	})
	if err != nil {
		return err
	}
	return s.redis.Del(ctx, BlockedKey(s.prefix, account)).Err()
}

// Voided logs an order an organizer voided (refunded through the
// provider) as a linked account's.
func (s *Service) Voided(ctx context.Context, actor, account, orderID int64, reason string, evidence any) error {
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		return audit(ctx, tx, actor, ActionVoid, account, &orderID, reason, evidence)
	})
}

// Reblock restores the Redis copy of a block the catalog has (a blocked
// account trying to log in after Redis lost its keys).
func (s *Service) Reblock(ctx context.Context, account int64) error {
	return s.redis.Set(ctx, BlockedKey(s.prefix, account), 1, 0).Err()
}

func audit(ctx context.Context, tx pgx.Tx, actor int64, action string, account int64, orderID *int64, reason string, evidence any) error {
	if evidence == nil {
		evidence = map[string]any{}
	}
	raw, err := json.Marshal(evidence)
	if err != nil {
		return err
	}
	return catalogstore.AddAudit(ctx, tx, catalogstore.AuditEntry{
		Actor: actor, Action: action, Account: account, OrderID: orderID, Reason: reason, Evidence: raw})
}

// Blocks returns the blocks of accounts.
func (s *Service) Blocks(ctx context.Context, accounts []int64) (map[int64]Block, error) {
	rows, err := catalogstore.AccountBlocks(ctx, s.db, accounts)
	out := make(map[int64]Block, len(rows))
	for id, b := range rows {
		out[id] = Block(b)
	}
	return out, err
}

// Audit lists the log's latest entries an organizer made or that concern
// accounts, newest first.
func (s *Service) Audit(ctx context.Context, actor int64, accounts []int64, limit int) ([]Entry, error) {
	rows, err := catalogstore.AuditLog(ctx, s.db, actor, accounts, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(rows))
	for i, e := range rows {
		out[i] = Entry(e)
	}
	return out, nil
}
