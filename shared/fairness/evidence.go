package fairness

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Shared is one card or device several accounts of a cluster used,
// shortened: enough to tell two apart, not to be reused anywhere.
type Shared struct {
	Value    string  `json:"value"`
	Accounts []int64 `json:"accounts"`
}

// Payout is tickets one account transferred to another.
type Payout struct {
	From    int64     `json:"from"`
	To      int64     `json:"to"`
	Tickets int       `json:"tickets"`
	Last    time.Time `json:"last_at"`
}

// Evidence is what links a cluster's members.
type Evidence struct {
	Cards     []Shared `json:"cards"`
	Devices   []Shared `json:"devices"`
	Transfers []Payout `json:"transfers"`
}

// Flag is an account over the velocity threshold, when it was flagged.
type Flag struct {
	Purchases int       `json:"purchases"`
	Signal    string    `json:"signal"`
	At        time.Time `json:"flagged_at"`
}

// Clusters returns the clusters of more than one account that any of
// accounts belongs to: cluster id → members, ascending.
func (s *Service) Clusters(ctx context.Context, accounts []int64) (map[int64][]int64, error) {
	rows, _ := s.db.Query(ctx, `SELECT cluster_id, account FROM account_clusters
		WHERE cluster_id IN (SELECT cluster_id FROM account_clusters WHERE account = ANY($1)) ORDER BY cluster_id, account`, accounts)
	out := map[int64][]int64{}
	var cluster, account int64
	_, err := pgx.ForEachRow(rows, []any{&cluster, &account}, func() error {
		out[cluster] = append(out[cluster], account)
		return nil
	})
	for id, members := range out {
		if len(members) < 2 {
			delete(out, id)
		}
	}
	return out, err
}

// Evidence lists the cards and devices that two or more of members share
// and the transfers between them.
func (s *Service) Evidence(ctx context.Context, members []int64) (Evidence, error) {
	e := Evidence{Cards: []Shared{}, Devices: []Shared{}, Transfers: []Payout{}}
	shared := func(query string, cut int) ([]Shared, error) {
		rows, _ := s.db.Query(ctx, query, members)
		out := []Shared{}
		var v string
		var accounts []int64
		_, err := pgx.ForEachRow(rows, []any{&v, &accounts}, func() error {
			out = append(out, Shared{Value: v[:min(cut, len(v))] + "…", Accounts: accounts})
			return nil
		})
		return out, err
	}
	var err error
	if e.Cards, err = shared(`SELECT fingerprint, array_agg(account ORDER BY account) FROM account_cards
		WHERE account = ANY($1) GROUP BY fingerprint HAVING count(*) > 1 ORDER BY 1`, 6); err != nil {
		return e, err
	}
	if e.Devices, err = shared(`SELECT device, array_agg(account ORDER BY account) FROM account_devices
		WHERE account = ANY($1) GROUP BY device HAVING count(*) > 1 ORDER BY 1`, 8); err != nil {
		return e, err
	}
	rows, _ := s.db.Query(ctx, `SELECT from_account, to_account, tickets, last_at FROM account_transfers
		WHERE from_account = ANY($1) AND to_account = ANY($1) ORDER BY last_at`, members)
	e.Transfers, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Payout])
	return e, err
}

// Flags returns the velocity flags of accounts.
func (s *Service) Flags(ctx context.Context, accounts []int64) (map[int64]Flag, error) {
	rows, _ := s.db.Query(ctx, `SELECT account, purchases, signal, flagged_at FROM account_flags WHERE account = ANY($1)`, accounts)
	out := map[int64]Flag{}
	var id int64
	var f Flag
	_, err := pgx.ForEachRow(rows, []any{&id, &f.Purchases, &f.Signal, &f.At}, func() error {
		out[id] = f
		return nil
	})
	return out, err
}
