package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// TestStrikesSlowThenBlockThenForget: on a driven clock, failures under
// the threshold cost nothing; the SlowAfter-th makes the subject wait
// SlowDelay, the BlockAfter-th blocks it for BlockFor; the block ends when
// its time has passed, and a new window counts from zero. Another subject
// is never affected.
func TestStrikesSlowThenBlockThenForget(t *testing.T) {
	t.Parallel()
	rdb := testenv.RedisClient(t)
	s := NewStrikes(rdb, fmt.Sprintf("t%d:", time.Now().UnixNano()))
	now := time.UnixMilli(1_000_000_000_000)
	s.Now = func() time.Time { return now }
	p := Policy{Window: 10 * time.Minute, SlowAfter: 3, SlowDelay: 30 * time.Second, BlockAfter: 5, BlockFor: time.Hour}
	ctx := context.Background()
	penalty := func(subject string) Penalty {
		t.Helper()
		got, err := s.Penalty(ctx, subject)
		require.NoError(t, err)
		return got
	}
	add := func(subject string) {
		t.Helper()
		_, err := s.Add(ctx, subject, p)
		require.NoError(t, err)
	}

	add("acct:1")
	add("acct:1")
	require.Zero(t, penalty("acct:1"), "under the threshold")
	add("acct:1")
	require.Equal(t, Penalty{Wait: 30 * time.Second, Strikes: 3}, penalty("acct:1"), "slowed")
	now = now.Add(30 * time.Second)
	require.Zero(t, penalty("acct:1"), "the slowdown ends")
	add("acct:1")
	add("acct:1")
	require.Equal(t, Penalty{Wait: time.Hour, Blocked: true, Strikes: 5}, penalty("acct:1"), "blocked")
	add("acct:2")
	require.Zero(t, penalty("acct:2"), "another subject is not affected")

	now = now.Add(59 * time.Minute)
	require.Equal(t, time.Minute, penalty("acct:1").Wait, "still blocked")
	now = now.Add(time.Minute)
	require.Zero(t, penalty("acct:1"), "the block ends")
	add("acct:1")
	require.Zero(t, penalty("acct:1"), "a new window counts from zero")
}

// TestStrikeKeysShareASlot: the strike script's window counter and penalty
// are in one Redis Cluster slot for any subject and time.
func TestStrikeKeysShareASlot(t *testing.T) {
	s := NewStrikes(nil, "catraca:")
	p := Policy{Window: time.Minute}
	for _, subject := range []string{"acct:1", "ip:10.0.0.1", "card:4242"} {
		for _, at := range []time.Time{time.Unix(0, 0), time.Now()} {
			testenv.RequireOneSlot(t, subject, s.keys(subject, p, at)...)
		}
	}
}
