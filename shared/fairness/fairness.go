// Package fairness makes many accounts worth no more than one person
// (docs/fairness.md): it records the signals that link accounts (a device
// cookie, a card fingerprint, a payout of transfers), keeps the clusters
// they make, counts purchases over a sliding window across events
// (velocity), and keeps the organizer's blocks and the audit log of them.
// Clusters and blocks live in the catalog; the hot path reads only Redis
// copies, in the account's own slot (rediskey.Account).
package fairness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/catalogstore"
)

// Signals that link accounts.
const (
	Device   = "device"
	Card     = "card"
	Transfer = "transfer"
)

// Config wires a Service.
type Config struct {
	Catalog *pgxpool.Pool
	Redis   redis.UniversalClient
	Prefix  string
	// Window and Threshold are the velocity rule: more than Threshold
	// purchases by one account, card or device within Window flag the
	// account (0: off).
	Window    time.Duration
	Threshold int
	Log       *slog.Logger
}

// Service is the linked-accounts store.
type Service struct {
	db        *pgxpool.Pool
	redis     redis.UniversalClient
	prefix    string
	window    time.Duration
	threshold int
	log       *slog.Logger
	now       func() time.Time
}

// New returns the service.
func New(c Config) *Service {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return &Service{db: c.Catalog, redis: c.Redis, prefix: c.Prefix, window: c.Window, threshold: c.Threshold, log: c.Log, now: time.Now}
}

// NewDeviceID is a fresh device identifier: 128 random bits, hex.
func NewDeviceID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidDeviceID tells an identifier this package made from anything else
// a client might send in its place.
func ValidDeviceID(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// SeenDevice records that account used device (at sign-up and log-in),
// links it to the other accounts seen with that device, and tells whether
// the account is blocked.
func (s *Service) SeenDevice(ctx context.Context, account int64, device string) (blocked bool, err error) {
	err = pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		inserted, err := catalogstore.RecordDevice(ctx, tx, account, device)
		if err != nil {
			return err
		}
		if inserted {
			others, err := catalogstore.AccountsByDevice(ctx, tx, device)
			if err != nil {
				return err
			}
			if err := s.merge(ctx, tx, append(others, account)); err != nil {
				return err
			}
		}
		blocked, err = catalogstore.AccountBlocked(ctx, tx, account)
		return err
	})
	return blocked, err
}

// LinkCard records that account was charged on the card of fingerprint
// (a charge the shop kept or gave back, over a limit included) and links
// it to every account charged on that card.
func (s *Service) LinkCard(ctx context.Context, account int64, fingerprint string) error {
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		inserted, err := catalogstore.RecordCard(ctx, tx, account, fingerprint)
		if err != nil || !inserted {
			return err
		}
		others, err := catalogstore.AccountsByCard(ctx, tx, fingerprint)
		if err != nil {
			return err
		}
		return s.merge(ctx, tx, append(others, account))
	})
}

// LinkTransfer records a ticket transferred from one account to another:
// a payout links them.
func (s *Service) LinkTransfer(ctx context.Context, from, to int64) error {
	return pgx.BeginFunc(ctx, s.db, func(tx pgx.Tx) error {
		if err := catalogstore.RecordTransfer(ctx, tx, from, to); err != nil {
			return err
		}
		return s.merge(ctx, tx, []int64{from, to})
	})
}

// clustersLock serializes merges: two merges that share an account would
// otherwise each move a part of the same clusters and leave two roots.
// Merges happen only when a signal is new for an account, never per hold.
const clustersLock = "fairness:clusters"

// merge puts accounts, and every account of their clusters, into one
// cluster whose id is the smallest of their cluster ids (union by the
// smallest root, kept flat: each account's row names its root).
func (s *Service) merge(ctx context.Context, tx pgx.Tx, accounts []int64) error {
	slices.Sort(accounts)
	accounts = slices.Compact(accounts)
	if len(accounts) < 2 {
		return nil
	}
	if err := catalogstore.LockClusters(ctx, tx, clustersLock); err != nil {
		return err
	}
	roots, err := catalogstore.ClusterRoots(ctx, tx, accounts)
	if err != nil {
		return err
	}
	root := slices.Min(roots)
	if len(roots) > 1 {
		if err := catalogstore.MoveClusters(ctx, tx, root, roots); err != nil {
			return err
		}
	}
	return catalogstore.JoinCluster(ctx, tx, root, append(accounts, roots...))
}

// Cluster returns account's cluster: its id and members (the account
// alone, with its own id, when nothing links it).
func (s *Service) Cluster(ctx context.Context, account int64) (int64, []int64, error) {
	ms, err := catalogstore.ClusterOf(ctx, s.db, account)
	if err != nil || len(ms) == 0 {
		return account, []int64{account}, err
	}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.Account
	}
	return ms[0].Cluster, ids, nil
}
