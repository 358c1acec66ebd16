package fairness

import (
	"context"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
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
	rows, err := catalogstore.ClustersOf(ctx, s.db, accounts)
	out := map[int64][]int64{}
	for _, m := range rows {
		out[m.Cluster] = append(out[m.Cluster], m.Account)
	}
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
	// shorten keeps cut characters of each value: enough to tell two apart.
	shorten := func(rows []catalogstore.SharedValue, cut int) []Shared {
		out := make([]Shared, len(rows))
		for i, r := range rows {
			out[i] = Shared{Value: r.Value[:min(cut, len(r.Value))] + "…", Accounts: r.Accounts}
		}
		return out
	}
	cards, err := catalogstore.SharedCards(ctx, s.db, members)
	if err != nil {
		return e, err
	}
	e.Cards = shorten(cards, 6)
	devices, err := catalogstore.SharedDevices(ctx, s.db, members)
	if err != nil {
		return e, err
	}
	e.Devices = shorten(devices, 8)
	transfers, err := catalogstore.TransfersAmong(ctx, s.db, members)
	if err != nil {
		return e, err
	}
	e.Transfers = make([]Payout, len(transfers))
	for i, t := range transfers {
		e.Transfers[i] = Payout(t)
	}
	return e, nil
}

// Flags returns the velocity flags of accounts.
func (s *Service) Flags(ctx context.Context, accounts []int64) (map[int64]Flag, error) {
	rows, err := catalogstore.AccountFlags(ctx, s.db, accounts)
	out := make(map[int64]Flag, len(rows))
	for id, f := range rows {
		out[id] = Flag(f)
	}
	return out, err
}
