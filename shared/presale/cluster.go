package presale

import "context"

// ClusterOf names the cluster of linked accounts an account belongs to
// (accounts sharing a card, a device or a transfer payout: issue 31,
// section 1). The presale allows one registration per cluster, so a
// scalper's hundred accounts get one chance, not a hundred. Until the
// clusters are built it is Unlinked: every account is its own cluster.
type ClusterOf func(ctx context.Context, account int64) (int64, error)

// Unlinked is the ClusterOf of a system without clusters: the account
// itself.
func Unlinked(_ context.Context, account int64) (int64, error) { return account, nil }
