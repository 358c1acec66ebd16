package fairness_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/tools/testenv"
)

type env struct {
	db  *pgxpool.Pool
	svc *fairness.Service
}

func newEnv(t *testing.T, window time.Duration, threshold int) env {
	t.Helper()
	d := testenv.NewDatabases(t, 0)
	cfg := testenv.Config(t, d)
	db, err := pgxpool.New(context.Background(), d.DSN(d.Catalog))
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return env{db, fairness.New(fairness.Config{Catalog: db, Redis: testenv.RedisClient(t), Prefix: cfg.RedisPrefix, Window: window, Threshold: threshold})}
}

// accounts signs up n accounts and returns their ids.
func (e env) accounts(t *testing.T, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		require.NoError(t, e.db.QueryRow(context.Background(), `INSERT INTO accounts (email, password_hash, name) VALUES ($1, 'x', 'Fan') RETURNING id`,
			fmt.Sprintf("fan%d-%d@example.com", i, time.Now().UnixNano())).Scan(&ids[i]))
	}
	return ids
}

func (e env) cluster(t *testing.T, account int64) (int64, []int64) {
	t.Helper()
	id, members, err := e.svc.Cluster(context.Background(), account)
	require.NoError(t, err)
	return id, members
}

// TestSignalsLinkAccountsIntoClusters: a shared device, a shared card and
// a transfer each link two accounts; links chain (a–b by device, c–d by
// card, b–c by a transfer make one cluster of four, named by its smallest
// account), and an account nothing links stays alone.
func TestSignalsLinkAccountsIntoClusters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, 0, 0)
	ids := e.accounts(t, 5)
	a, b, c, d, lone := ids[0], ids[1], ids[2], ids[3], ids[4]
	dev, other := fairness.NewDeviceID(), fairness.NewDeviceID()

	for _, x := range []int64{a, b} {
		blocked, err := e.svc.SeenDevice(ctx, x, dev)
		require.NoError(t, err)
		require.False(t, blocked)
	}
	_, err := e.svc.SeenDevice(ctx, lone, other)
	require.NoError(t, err)
	require.NoError(t, e.svc.LinkCard(ctx, d, "fpXYZ"))
	require.NoError(t, e.svc.LinkCard(ctx, c, "fpXYZ"))

	id, members := e.cluster(t, b)
	require.Equal(t, a, id, "a device links a and b")
	require.Equal(t, []int64{a, b}, members)
	id, members = e.cluster(t, d)
	require.Equal(t, c, id, "a card links c and d")
	require.Equal(t, []int64{c, d}, members)

	require.NoError(t, e.svc.LinkTransfer(ctx, c, b))
	for _, x := range []int64{a, b, c, d} {
		id, members = e.cluster(t, x)
		require.Equal(t, a, id, "the transfer joins both clusters")
		require.Equal(t, []int64{a, b, c, d}, members)
	}
	id, members = e.cluster(t, lone)
	require.Equal(t, lone, id)
	require.Equal(t, []int64{lone}, members)

	ev, err := e.svc.Evidence(ctx, members)
	require.NoError(t, err)
	require.Empty(t, ev.Cards, "a lone account shares nothing")
	ev, err = e.svc.Evidence(ctx, []int64{a, b, c, d})
	require.NoError(t, err)
	require.Len(t, ev.Devices, 1)
	require.Equal(t, []int64{a, b}, ev.Devices[0].Accounts)
	require.Equal(t, dev[:8]+"…", ev.Devices[0].Value, "shown shortened")
	require.Len(t, ev.Cards, 1)
	require.Equal(t, []int64{c, d}, ev.Cards[0].Accounts)
	require.Len(t, ev.Transfers, 1)
	require.Equal(t, fairness.Payout{From: c, To: b, Tickets: 1, Last: ev.Transfers[0].Last}, ev.Transfers[0])
}

// TestConcurrentLinksMakeOneCluster: many accounts seen with one device at
// once end in one cluster with one root (merges are serialized).
func TestConcurrentLinksMakeOneCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, 0, 0)
	ids := e.accounts(t, 12)
	dev := fairness.NewDeviceID()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			// Pairs first, then the shared device: many merges race.
			_, err := e.svc.SeenDevice(ctx, id, fairness.NewDeviceID())
			require.NoError(t, err)
			require.NoError(t, e.svc.LinkCard(ctx, id, fmt.Sprintf("card%d", i/2)))
			_, err = e.svc.SeenDevice(ctx, id, dev)
			require.NoError(t, err)
		})
	}
	wg.Wait()
	for _, id := range ids {
		root, members := e.cluster(t, id)
		require.Equal(t, ids[0], root)
		require.Len(t, members, len(ids))
	}
}

// TestVelocityFlagsAcrossEvents: more purchases than the threshold within
// the window by one account, or on one card or device, flag the account
// (and a fresh account on the device): Check and Velocity say so from
// Redis alone; a retried order counts once; an unrelated account is clean.
func TestVelocityFlagsAcrossEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, time.Hour, 2)
	ids := e.accounts(t, 4)
	fan, farm1, farm2, clean := ids[0], ids[1], ids[2], ids[3]
	dev := fairness.NewDeviceID()

	require.NoError(t, e.svc.Purchased(ctx, fan, 101, "cardA"))
	require.NoError(t, e.svc.Purchased(ctx, fan, 101, "cardA"), "a retry of one order")
	require.NoError(t, e.svc.Purchased(ctx, fan, 102, "cardA"))
	n, flagged, err := e.svc.Velocity(ctx, fan, "")
	require.NoError(t, err)
	require.False(t, flagged, "2 purchases are within a threshold of 2")
	require.Equal(t, 0, n, "nothing is written below the threshold")

	require.NoError(t, e.svc.Purchased(ctx, fan, 203, "cardA"))
	n, flagged, err = e.svc.Velocity(ctx, fan, "")
	require.NoError(t, err)
	require.True(t, flagged, "the third purchase in the window, across events")
	require.Equal(t, 3, n)

	// A farm of accounts on one device: each bought once, the device thrice.
	for i, id := range []int64{farm1, farm2, farm1} {
		if i < 2 {
			_, err := e.svc.SeenDevice(ctx, id, dev)
			require.NoError(t, err)
		}
		require.NoError(t, e.svc.Purchased(ctx, id, int64(300+i), fmt.Sprintf("card%d", i)))
	}
	v, err := e.svc.Check(ctx, farm2, dev)
	require.NoError(t, err)
	require.True(t, v.Flagged, "the device bought 3 times")
	fresh := e.accounts(t, 1)[0]
	v, err = e.svc.Check(ctx, fresh, dev)
	require.NoError(t, err)
	require.True(t, v.Flagged, "a fresh account on the flagged device")
	require.Equal(t, fairness.FlagPoints, e.svc.Flag(ctx, fresh, dev), "the join's score sees the flagged device too")
	v, err = e.svc.Check(ctx, clean, fairness.NewDeviceID())
	require.NoError(t, err)
	require.Equal(t, fairness.Verdict{}, v)
	require.Zero(t, e.svc.Flag(ctx, clean, fairness.NewDeviceID()))

	flags, err := e.svc.Flags(ctx, ids)
	require.NoError(t, err)
	require.Contains(t, flags, fan)
	require.Equal(t, "account", flags[fan].Signal)
	require.Equal(t, "device", flags[farm1].Signal)
	require.NotContains(t, flags, clean)
}

// TestBlocksAreCheckedAndLogged: a block is seen at the next log-in (the
// catalog) and by Check (Redis); unblocking lifts both; both are in the
// audit log with who did them.
func TestBlocksAreCheckedAndLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, time.Hour, 5)
	ids := e.accounts(t, 2)
	org, fan := ids[0], ids[1]
	dev := fairness.NewDeviceID()
	require.NoError(t, e.svc.Block(ctx, org, fan, "four accounts on one card", map[string]any{"cards": 1}))
	blocked, err := e.svc.SeenDevice(ctx, fan, dev)
	require.NoError(t, err)
	require.True(t, blocked)
	v, err := e.svc.Check(ctx, fan, dev)
	require.NoError(t, err)
	require.True(t, v.Blocked)

	require.NoError(t, e.svc.Unblock(ctx, org, fan, "a family: appeal accepted"))
	blocked, err = e.svc.SeenDevice(ctx, fan, dev)
	require.NoError(t, err)
	require.False(t, blocked)
	v, err = e.svc.Check(ctx, fan, dev)
	require.NoError(t, err)
	require.False(t, v.Blocked)

	log, err := e.svc.Audit(ctx, org, nil, 10)
	require.NoError(t, err)
	require.Len(t, log, 2)
	require.Equal(t, fairness.ActionUnblock, log[0].Action)
	require.Equal(t, fairness.ActionBlock, log[1].Action)
	require.Equal(t, org, log[1].Actor)
	require.Equal(t, fan, log[1].Account)
	require.JSONEq(t, `{"cards": 1}`, string(log[1].Evidence))
}
