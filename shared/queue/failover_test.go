package queue

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/redisconn"
	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/testenv"
)

// joinLog is what fans were told while Redis failed over: each join
// acknowledged (account → number, in order) and each refused, with when.
type joinLog struct {
	mu       sync.Mutex
	acked    []int64
	number   map[int64]int64
	refusals []time.Time
	lastAck  time.Time
	gap      time.Duration // the longest time without a placed join
	other    []error       // neither a place nor ErrUnavailable: fails open
}

// joinUntil joins new accounts from next on, one every 2 ms, until done
// is closed (and at least once after), as fans arriving during a
// failover do.
func (l *joinLog) joinUntil(f *roomFixture, eventID int64, next int64, done <-chan struct{}) {
	for ; ; next++ {
		p, err := f.room.Join(context.Background(), eventID, next, 0)
		l.mu.Lock()
		switch {
		case err == nil:
			if !l.lastAck.IsZero() {
				l.gap = max(l.gap, time.Since(l.lastAck))
			}
			l.lastAck = time.Now()
			l.acked = append(l.acked, next)
			l.number[next] = p.Number
		case errors.Is(err, ErrUnavailable):
			l.refusals = append(l.refusals, time.Now())
		default:
			l.other = append(l.other, err)
		}
		l.mu.Unlock()
		select {
		case <-done:
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// window is the time from the first refusal to the last.
func (l *joinLog) window() time.Duration {
	if len(l.refusals) == 0 {
		return 0
	}
	return l.refusals[len(l.refusals)-1].Sub(l.refusals[0])
}

// TestFailoverKeepsPlaces fails the event's slot over on a private
// cluster while fans join: first as an operator (CLUSTER FAILOVER on the
// replica, which waits until it has every write), then by killing the
// primary. Joins are refused (ErrUnavailable: fail closed) while no
// primary answers, and resume on the promoted replica; a place Redis
// still holds keeps its number, no two fans share one, and only the last
// joins before a kill (unreplicated) can be lost. The figures go to
// docs/waiting-room.md (Failover).
func TestFailoverKeepsPlaces(t *testing.T) {
	if !testenv.OnCluster() {
		t.Skip("runs in the cluster pass of make test (CATRACA_TEST_REDIS=cluster): it starts a private Redis Cluster")
	}
	c, err := localenv.FreeCluster(t.TempDir())
	require.NoError(t, err)
	c.NodeTimeout = time.Second // how long a dead primary goes unnoticed
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, c.Up(ctx))
	t.Cleanup(func() { c.Down() })
	rdb := redisconn.Open(config.Redis{RedisAddr: strings.Join(c.Addrs(), ","), RedisCluster: true})
	t.Cleanup(func() { rdb.Close() })

	const event = 1
	f := newRoomOn(t, rdb, event, Settings{Ceiling: 10})
	f.clock.add(time.Minute)
	_, _, err = f.room.Draw(ctx, event)
	require.NoError(t, err)
	log := &joinLog{number: map[int64]int64{}}
	for a := int64(1); a <= 100; a++ {
		p, err := f.room.Join(ctx, event, a, 0)
		require.NoError(t, err)
		log.acked, log.number[a] = append(log.acked, a), p.Number
	}

	// nodes returns the primary and replica addresses of the event's slot
	// (no replica while the old primary is down).
	nodes := func() (primary, replica string) {
		primary, replica, err := c.SlotNodes(ctx, f.room.keys(event).q)
		require.NoError(t, err)
		return primary, replica
	}
	// during joins fans while fail runs and until the promoted replica
	// has answered joins for a while.
	during := func(what string, fail func(primary, replica string)) *joinLog {
		primary, replica := nodes()
		require.NotEmpty(t, replica, "%s: the slot has a replica", what)
		l := &joinLog{number: map[int64]int64{}}
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); l.joinUntil(f, event, 1_000_000*int64(len(what)), done) }()
		time.Sleep(100 * time.Millisecond) // some joins before
		start := time.Now()
		fail(primary, replica)
		// Wait for the promotion, then for 20 joins on the new primary.
		for ctx.Err() == nil {
			if now, _ := nodes(); now == replica {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		promotedAt := time.Now()
		promoted := promotedAt.Sub(start)
		l.mu.Lock()
		want := len(l.acked) + 20
		l.mu.Unlock()
		for ctx.Err() == nil {
			l.mu.Lock()
			n := len(l.acked)
			l.mu.Unlock()
			if n >= want {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(done)
		wg.Wait()
		require.NoError(t, ctx.Err(), "%s: no promotion, or joins never resumed", what)
		require.Empty(t, l.other, "%s: a join neither placed nor refused", what)
		if n := len(l.refusals); n > 0 {
			// The client finds the new primary within seconds of its
			// promotion, not on its next periodic reload.
			require.Less(t, l.refusals[n-1].Sub(promotedAt), 3*time.Second, "%s: joins refused %v after the promotion",
				what, l.refusals[n-1].Sub(promotedAt).Round(time.Millisecond))
		}
		t.Logf("%s: replica promoted after %v; no join placed for %v; %d joins refused over %v; %d placed", what,
			promoted.Round(time.Millisecond), l.gap.Round(time.Millisecond), len(l.refusals), l.window().Round(time.Millisecond), len(l.acked))
		return l
	}
	// held reads every member's number as Redis now has it.
	held := func() map[string]float64 {
		zs, err := rdb.ZRangeWithScores(ctx, f.room.keys(event).q, 0, -1).Result()
		require.NoError(t, err)
		out := map[string]float64{}
		seen := map[float64]string{}
		for _, z := range zs {
			m := z.Member.(string)
			require.Empty(t, seen[z.Score], "%s and %s share place %v", m, seen[z.Score], z.Score)
			seen[z.Score], out[m] = m, z.Score
		}
		return out
	}

	manual := during("CLUSTER FAILOVER", func(_, _ string) {
		require.NoError(t, c.Failover(ctx, f.room.keys(event).q))
	})
	places := held()
	for _, l := range []*joinLog{log, manual} {
		for _, a := range l.acked {
			require.Equal(t, float64(l.number[a]), places[member(a)], "account %d keeps its place through a manual failover", a)
		}
	}

	killed := during("killed primary", func(primary, _ string) {
		require.NoError(t, c.KillNode(localenv.PortOf(primary)))
		// Back after the failover, it rejoins as the new primary's replica.
		t.Cleanup(func() {
			require.NoError(t, c.StartNode(context.Background(), localenv.PortOf(primary)))
			require.NoError(t, c.WaitOK(context.Background()))
		})
	})
	places = held()
	lost := 0
	for _, l := range []*joinLog{log, manual, killed} {
		for _, a := range l.acked {
			n, ok := places[member(a)]
			if !ok {
				// Replication is asynchronous: only writes acknowledged just
				// before the kill can be missing.
				require.Same(t, killed, l, "account %d lost its place before the kill", a)
				lost++
				continue
			}
			require.Equal(t, float64(l.number[a]), n, "account %d keeps the number it was told", a)
		}
	}
	t.Logf("killed primary: %d acknowledged joins lost (unreplicated when it died)", lost)
}

func member(account int64) string { return strconv.FormatInt(account, 10) }
