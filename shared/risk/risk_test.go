package risk

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

var rules = Rules{NewAccount: 24 * time.Hour, DeviceJoins: 5, NetJoins: 30, Threshold: 3, LookCloser: 1}

func TestScoreOfTheFreeSignals(t *testing.T) {
	now := time.Now()
	old, fresh := now.Add(-30*24*time.Hour), now.Add(-time.Hour)
	for _, c := range []struct {
		name    string
		s       Signals
		points  int
		reasons Reason
	}{
		{"a fan who signed up last month, in its browser", Signals{Since: old, Device: "d"}, 0, 0},
		{"a session from before the claim existed", Signals{Device: "d"}, 0, 0},
		{"a fan who signed up an hour ago", Signals{Since: fresh, Device: "d"}, 1, NewAccount},
		{"an API client of a new account", Signals{Since: fresh}, 2, NewAccount | NoDevice},
		{"an unverified email, once emails are verified", Signals{Since: old, Device: "d", EmailKnown: true}, 1, UnverifiedEmail},
		{"a bot label", Signals{Since: old, Device: "d", Bot: "bot"}, 3, BotLabel},
		{"a velocity flag is not a free signal", Signals{Since: old, Device: "d", Velocity: 2}, 0, 0},
	} {
		sc := rules.Free(c.s, now)
		require.Equal(t, c.points, sc.Points, c.name)
		require.Equal(t, c.reasons, sc.Reasons, "%s: %s", c.name, sc.Reasons)
	}
	require.Equal(t, "new-account,no-device", (NewAccount | NoDevice).String())
}

func TestCountersAreReadOnlyForJoinsWorthALook(t *testing.T) {
	clean := rules.Free(Signals{Since: time.Now().Add(-48 * time.Hour), Device: "d"}, time.Now())
	require.False(t, rules.NeedsCounts(clean), "a clean join costs no Redis round trip")
	newAccount := Score{Points: 1, Reasons: NewAccount}
	require.True(t, rules.NeedsCounts(newAccount))
	require.False(t, rules.NeedsCounts(Score{Points: 3}), "already challenged: nothing to count")
	burst := rules.Counted(newAccount, Signals{DeviceJoins: 6, NetJoins: 31})
	require.Equal(t, 4, burst.Points)
	require.True(t, rules.Challenged(burst))
	require.False(t, rules.Challenged(rules.Counted(newAccount, Signals{DeviceJoins: 5, NetJoins: 30})), "at the limit is not over it")
	flagged := rules.Counted(newAccount, Signals{Velocity: 2})
	require.Equal(t, NewAccount|Velocity, flagged.Reasons)
	require.True(t, rules.Challenged(flagged), "a new account flagged for velocity")
}

func TestCounterCountsAMinutePerDeviceAndNetwork(t *testing.T) {
	c := &Counter{Redis: testenv.RedisClient(t), Prefix: "t" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"}
	ctx, now := context.Background(), time.Now()
	for i := 1; i <= 3; i++ {
		dev, net, err := c.Count(ctx, 7, "phone", "203.0.113.0/24", now)
		require.NoError(t, err)
		require.EqualValues(t, i, dev)
		require.EqualValues(t, i, net)
	}
	dev, net, err := c.Count(ctx, 8, "phone", "", now)
	require.NoError(t, err)
	require.EqualValues(t, 1, dev, "another event counts apart")
	require.Zero(t, net)
	dev, _, err = c.Count(ctx, 7, "phone", "", now.Add(time.Minute))
	require.NoError(t, err)
	require.EqualValues(t, 1, dev, "the next minute starts again")
}

func TestNetworkIsTheSlash24(t *testing.T) {
	require.Equal(t, "203.0.113.0/24", Network("203.0.113.77"))
	require.Equal(t, "2001:db8::/64", Network("2001:db8::/64"))
}
