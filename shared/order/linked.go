package order

import (
	"context"
	"fmt"

	"github.com/catraca/catraca/shared/shardstore"
)

// Linked is what payments ask of linked accounts (fairness.Service):
// the cluster an account belongs to, recording the card it paid with,
// and counting a purchase against the velocity windows.
type Linked interface {
	Cluster(ctx context.Context, account int64) (int64, []int64, error)
	LinkCard(ctx context.Context, account int64, fingerprint string) error
	Purchased(ctx context.Context, account, orderID int64, card string) error
}

// ClusterLimit is the failure of a payment attempt whose account's
// cluster of linked accounts had already bought the event's per-fan
// limit: its money goes back.
const ClusterLimit = "cluster_limit"

// linkCard records the charge's card for o's account, before any limit
// is checked: a charge refused over its card's limit still shows that the
// account pays with that card, so it joins the card's cluster (and the
// presale's one registration per cluster sees it). The payment that
// reveals a shared card is so counted with its new cluster too.
func (c charge) linkCard(ctx context.Context, o shardstore.Charge) error {
	if c.s.linked == nil || c.p.Card == "" || c.s.noCardLimit {
		return nil
	}
	return c.s.linked.LinkCard(ctx, o.Account, c.p.Card)
}

// overClusterLimit tells why o's account may not buy o's tickets as one of
// a cluster of linked accounts (a shared card, device or payout of
// transfers: docs/fairness.md), or "" when it may: the cluster is limited
// per event as one account is. The charge's card was linked (linkCard).
// Checked here, at payment, and not at the hold: a hold reads no catalog
// (the spike never reaches it), and a cluster's orders are on the shard.
func (c charge) overClusterLimit(ctx context.Context, o shardstore.Charge, paymentID int64, limit int) (string, error) {
	s := c.s
	if s.linked == nil || s.noClusterLimit {
		return "", nil
	}
	cluster, members, err := s.linked.Cluster(ctx, o.Account)
	if err != nil || len(members) < 2 {
		return "", err
	}
	has, err := c.tx.ClusterTickets(ctx, cluster, members, o.EventID, o.OrderID)
	if err != nil || has+o.Tickets <= limit {
		return "", err
	}
	reason := fmt.Sprintf("this account is linked to %d other account(s) (a shared card, device or transfers) that together already bought %d of the %d tickets one fan may buy for this event",
		len(members)-1, has, limit)
	return reason, c.tx.SetPayment(ctx, paymentID, shardstore.PaymentSucceeded, ClusterLimit, c.p.ID, c.p.Card)
}

// countPurchase counts a sale against the velocity windows once its
// transaction committed; a failure is logged (the sale stands).
func (s *Service) countPurchase(ctx context.Context, account, orderID int64, card string) {
	if s.linked == nil {
		return
	}
	if err := s.linked.Purchased(ctx, account, orderID, card); err != nil {
		s.log.Warn("velocity: purchase not counted", "account", account, "order", orderID, "err", err)
	}
}
