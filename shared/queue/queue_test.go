package queue

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// clock is a settable time source shared by a room and its test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type roomFixture struct {
	room   *Room
	rdb    redis.UniversalClient
	clock  *clock
	drawAt time.Time
	// settings as published, to publish again or changed.
	settings Settings
}

// newRoom returns a room on the test Redis with its own key prefix and an
// event whose draw is one minute after the fixture's "now".
func newRoom(t testing.TB, eventID int64, s Settings) *roomFixture {
	t.Helper()
	return newRoomOn(t, testenv.RedisClient(t), eventID, s)
}

// newRoomOn is newRoom on the Redis of rdb.
func newRoomOn(t testing.TB, rdb redis.UniversalClient, eventID int64, s Settings) *roomFixture {
	t.Helper()
	c := &clock{t: time.Now().Truncate(time.Millisecond)}
	r := New(rdb, fmt.Sprintf("t%d:", time.Now().UnixNano()))
	r.now = c.now
	f := &roomFixture{room: r, rdb: rdb, clock: c, drawAt: c.t.Add(time.Minute)}
	s.Enabled = true
	s.OpensAt, s.DrawAt = c.t.Add(-time.Minute), f.drawAt
	if s.ActiveTTL == 0 {
		s.ActiveTTL = 10 * time.Minute
	}
	if s.AdmissionTTL == 0 {
		s.AdmissionTTL = 15 * time.Minute
	}
	if s.Abandon == 0 {
		s.Abandon = 3 * time.Minute
	}
	_, err := r.Publish(context.Background(), eventID, s)
	require.NoError(t, err)
	f.settings = s
	return f
}

// loseRoom deletes every key of an event's room, as a failover that lost
// its writes would.
func (f *roomFixture) loseRoom(t *testing.T, eventID int64) {
	t.Helper()
	ctx := context.Background()
	// All the room's keys share one slot, so one node's KEYS finds them.
	node := redis.Cmdable(f.rdb)
	if c, ok := f.rdb.(*redis.ClusterClient); ok {
		var err error
		node, err = c.MasterForKey(ctx, f.room.keys(eventID).tag)
		require.NoError(t, err)
	}
	keys, err := node.Keys(ctx, f.room.keys(eventID).tag+"*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys)
	require.NoError(t, f.rdb.Del(ctx, keys...).Err())
}

func TestOnePlacePerAccountAndFIFOAfterTheDraw(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 1, Settings{Ceiling: 10})
	ctx := context.Background()
	for a := int64(1); a <= 50; a++ {
		p, err := f.room.Join(ctx, 1, a, 0)
		require.NoError(t, err)
		require.Equal(t, StatePrequeue, p.State)
		require.Equal(t, f.drawAt.UTC(), p.At)
		again, err := f.room.Join(ctx, 1, a, 0)
		require.NoError(t, err)
		require.Equal(t, StatePrequeue, again.State, "a repeated join is free and changes nothing")
	}
	f.clock.add(time.Minute)
	n, did, err := f.room.Draw(ctx, 1)
	require.NoError(t, err)
	require.True(t, did)
	require.Equal(t, 50, n)

	positions := map[int64]bool{}
	for a := int64(1); a <= 50; a++ {
		st, err := f.room.Status(ctx, 1, a, 0)
		require.NoError(t, err)
		require.Equal(t, StateWaiting, st.State)
		require.False(t, positions[st.Position], "dense ranks are unique")
		positions[st.Position] = true
	}
	for p := int64(1); p <= 50; p++ {
		require.True(t, positions[p], "ranks are dense 1..N: %d missing", p)
	}
	// After the draw, newcomers go to the end in arrival order.
	for a := int64(100); a < 105; a++ {
		p, err := f.room.Join(ctx, 1, a, 0)
		require.NoError(t, err)
		require.Equal(t, StateWaiting, p.State)
		require.Equal(t, 50+a-99, p.Number)
		st, err := f.room.Status(ctx, 1, a, 0)
		require.NoError(t, err)
		require.Equal(t, 50+a-99, st.Position)
	}
	p, err := f.room.Join(ctx, 1, 100, 0)
	require.NoError(t, err)
	require.Equal(t, int64(51), p.Number, "one place per account after the draw too")
}

func TestDrawHappensOnceAcrossRacingTickers(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 2, Settings{Ceiling: 10})
	ctx := context.Background()
	for a := int64(1); a <= 2000; a++ {
		_, err := f.room.Join(ctx, 2, a, 0)
		require.NoError(t, err)
	}
	f.clock.add(time.Minute)
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for range 8 {
		wg.Go(func() {
			_, did, err := f.room.Draw(ctx, 2)
			require.NoError(t, err)
			if did {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(t, 1, winners)
	scores, err := f.rdb.ZRangeWithScores(ctx, f.room.keys(2).q, 0, -1).Result()
	require.NoError(t, err)
	require.Len(t, scores, 2000)
	for i, z := range scores {
		require.EqualValues(t, i+1, z.Score, "places 1..N, each once")
	}
}

// TestShuffleIsUniform runs many draws of 6 fans and checks with a
// chi-square test that every fan is equally likely at every place.
func TestShuffleIsUniform(t *testing.T) {
	t.Parallel()
	const n, draws = 6, 60000
	var counts [n][n]int
	members := make([]string, n)
	for d := 0; d < draws; d++ {
		for i := range members {
			members[i] = strconv.Itoa(i)
		}
		Shuffle(members)
		for place, m := range members {
			who, _ := strconv.Atoi(m)
			counts[who][place]++
		}
	}
	expected := float64(draws) / n
	chi2 := 0.0
	for _, row := range counts {
		for _, c := range row {
			d := float64(c) - expected
			chi2 += d * d / expected
		}
	}
	// In a permutation every row and column sums to the number of draws, so
	// the cells are not independent: the sum has mean n(n-1), and
	// chi2·(n-1)/n follows χ² with (n-1)² = 25 degrees of freedom.
	chi2 *= float64(n-1) / n
	// 60.14 is the 0.9999 quantile of χ²(25): a fair shuffle fails once in
	// ten thousand runs.
	require.Less(t, chi2, 60.14, "draw is not uniform: chi² = %.1f, counts %v", chi2, counts)
}

func TestCeilingHoldsWithConcurrentTickers(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 3, Settings{Ceiling: 40})
	ctx := context.Background()
	for a := int64(1); a <= 500; a++ {
		_, err := f.room.Join(ctx, 3, a, 0)
		require.NoError(t, err)
	}
	f.clock.add(time.Minute)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				res, err := f.room.Tick(ctx, 3, TickInput{Interval: time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				if res.Active > 40 {
					t.Errorf("active %d exceeds the ceiling", res.Active)
				}
			}
		})
	}
	wg.Wait()
	active, err := f.rdb.ZCard(ctx, f.room.keys(3).active).Result()
	require.NoError(t, err)
	require.EqualValues(t, 40, active, "the ceiling is reached, never passed")
	require.NoError(t, f.room.Leave(ctx, 3, firstAdmitted(t, f, 3)))
	res, err := f.room.Tick(ctx, 3, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Admitted, "a freed slot admits the next fan at once")
}

func firstAdmitted(t *testing.T, f *roomFixture, eventID int64) int64 {
	m, err := f.rdb.ZRange(context.Background(), f.room.keys(eventID).active, 0, 0).Result()
	require.NoError(t, err)
	id, _ := strconv.ParseInt(m[0], 10, 64)
	return id
}

// joinThenTick puts fans 1..n in line, moves past the draw and runs one tick.
func joinThenTick(t *testing.T, f *roomFixture, eventID int64, n int64) TickResult {
	t.Helper()
	ctx := context.Background()
	for a := int64(1); a <= n; a++ {
		_, err := f.room.Join(ctx, eventID, a, 0)
		require.NoError(t, err)
	}
	f.clock.add(time.Minute)
	res, err := f.room.Tick(ctx, eventID, TickInput{Interval: time.Second})
	require.NoError(t, err)
	return res
}

// drawThenJoin moves past an empty draw and puts fans 1..n in line in that
// order: places 1..n.
func drawThenJoin(t *testing.T, f *roomFixture, eventID int64, n int64) {
	t.Helper()
	ctx := context.Background()
	f.clock.add(time.Minute)
	_, _, err := f.room.Draw(ctx, eventID)
	require.NoError(t, err)
	for a := int64(1); a <= n; a++ {
		p, err := f.room.Join(ctx, eventID, a, 0)
		require.NoError(t, err)
		require.Equal(t, a, p.Number)
	}
}

// drawThenTick is drawThenJoin and one tick.
func drawThenTick(t *testing.T, f *roomFixture, eventID int64, n int64) TickResult {
	t.Helper()
	drawThenJoin(t, f, eventID, n)
	res, err := f.room.Tick(context.Background(), eventID, TickInput{Interval: time.Second})
	require.NoError(t, err)
	return res
}

// inLine lists the fans still waiting, first in line first.
func inLine(t *testing.T, f *roomFixture, eventID int64) []int64 {
	t.Helper()
	m, err := f.rdb.ZRange(context.Background(), f.room.keys(eventID).q, 0, -1).Result()
	require.NoError(t, err)
	ids := make([]int64, len(m))
	for i, s := range m {
		ids[i], _ = strconv.ParseInt(s, 10, 64)
	}
	return ids
}

func TestSoldOutStopsAdmission(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 4, Settings{Ceiling: 5})
	ctx := context.Background()
	require.EqualValues(t, 5, joinThenTick(t, f, 4, 20).Admitted)
	require.NoError(t, f.room.Leave(ctx, 4, firstAdmitted(t, f, 4)))
	res, err := f.room.Tick(ctx, 4, TickInput{SoldOut: true, Interval: time.Second})
	require.NoError(t, err)
	require.Zero(t, res.Admitted, "nobody is admitted to a sold-out event")
	st, err := f.room.Status(ctx, 4, inLine(t, f, 4)[0], 0)
	require.NoError(t, err)
	require.Equal(t, StateSoldOut, st.State, "the remaining queue is told")
	p, err := f.room.Progress(ctx, 4)
	require.NoError(t, err)
	require.True(t, p.SoldOut)
	_, err = f.room.Tick(ctx, 4, TickInput{Paused: true, Interval: time.Second})
	require.NoError(t, err)
}

// TestProgressTellsAnOrganizersPause: the shared counters say when the
// organizer paused admission, so the line is not promised a wait.
func TestProgressTellsAnOrganizersPause(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 11, Settings{Ceiling: 5, Paused: true})
	ctx := context.Background()
	p, err := f.room.Progress(ctx, 11)
	require.NoError(t, err)
	require.True(t, p.Paused, "paused by the organizer")
	f.settings.Paused = false
	_, err = f.room.Publish(ctx, 11, f.settings)
	require.NoError(t, err)
	p, err = f.room.Progress(ctx, 11)
	require.NoError(t, err)
	require.False(t, p.Paused, "resumed")
}

func TestLeavingHandsTheSlotOnAndDropsThePlace(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 9, Settings{Ceiling: 1})
	ctx := context.Background()
	require.EqualValues(t, 1, joinThenTick(t, f, 9, 3).Admitted)
	first := firstAdmitted(t, f, 9)
	waiting := inLine(t, f, 9)
	require.Len(t, waiting, 2)
	second, third := waiting[0], waiting[1]

	res, err := f.room.Tick(ctx, 9, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.Zero(t, res.Admitted, "the slot is still taken")
	require.NoError(t, f.room.Leave(ctx, 9, first))
	require.NoError(t, f.room.Leave(ctx, 9, first), "leaving twice is fine")
	st, err := f.room.Status(ctx, 9, first, 0)
	require.NoError(t, err)
	require.Equal(t, StateNone, st.State, "a fan who left is out, not admitted again")

	require.NoError(t, f.room.Leave(ctx, 9, second), "a waiting fan may leave the line too")
	res, err = f.room.Tick(ctx, 9, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.Admitted)
	st, err = f.room.Status(ctx, 9, third, 0)
	require.NoError(t, err)
	require.Equal(t, StateAdmitted, st.State, "the freed slot went to the next fan still in line")
	require.Zero(t, res.Waiting)
}

func TestAdmissionWaitsForItsStartAfterTheDraw(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 10, Settings{Ceiling: 5})
	ctx := context.Background()
	s := Settings{Enabled: true, OpensAt: f.drawAt.Add(-time.Hour), DrawAt: f.drawAt, AdmitFrom: f.drawAt.Add(30 * time.Second),
		Ceiling: 5, ActiveTTL: time.Minute, AdmissionTTL: time.Minute, Abandon: time.Hour}
	_, err := f.room.Publish(ctx, 10, s)
	require.NoError(t, err)
	for a := int64(1); a <= 3; a++ {
		_, err := f.room.Join(ctx, 10, a, 0)
		require.NoError(t, err)
	}
	f.clock.add(time.Minute) // the draw is due
	res, err := f.room.Tick(ctx, 10, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Drawn, "places are drawn at sale start")
	require.Zero(t, res.Admitted, "nobody is let in before admission starts")
	st, err := f.room.Status(ctx, 10, 1, 0)
	require.NoError(t, err)
	require.Equal(t, StateWaiting, st.State)
	require.Positive(t, st.Position, "fans learn their places meanwhile")
	p, err := f.room.Progress(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, s.AdmitFrom.UnixMilli(), p.AdmitAt.UnixMilli())
	f.clock.add(30 * time.Second)
	res, err = f.room.Tick(ctx, 10, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.Admitted)
}

func TestAbandonedFansLoseTheirPlace(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 5, Settings{Ceiling: 1, Abandon: 90 * time.Second})
	ctx := context.Background()
	drawThenJoin(t, f, 5, 4)
	f.clock.add(60 * time.Second)
	for _, a := range []int64{1, 3, 4} { // fan 2 stopped polling
		_, err := f.room.Status(ctx, 5, a, 0)
		require.NoError(t, err)
	}
	f.clock.add(40 * time.Second)
	_, err := f.room.Tick(ctx, 5, TickInput{Interval: time.Second})
	require.NoError(t, err)
	st, err := f.room.Status(ctx, 5, 2, 0)
	require.NoError(t, err)
	require.Equal(t, StateNone, st.State, "fan 2 lost the place")
	st, err = f.room.Status(ctx, 5, 3, 0)
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Position, "fan 1 was admitted, fan 2 left: fan 3 is next")
	p, err := f.room.Progress(ctx, 5)
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Abandoned)
	require.EqualValues(t, 2, p.Waiting)
}

func TestQueueTicketRestoresAPlaceLostInAFailover(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 6, Settings{Ceiling: 1})
	ctx := context.Background()
	f.clock.add(time.Minute)
	_, _, err := f.room.Draw(ctx, 6)
	require.NoError(t, err)
	var places []int64
	for a := int64(1); a <= 3; a++ {
		p, err := f.room.Join(ctx, 6, a, 0)
		require.NoError(t, err)
		places = append(places, p.Number)
	}
	// Redis loses the room; the controller republishes and recovers.
	f.loseRoom(t, 6)
	_, err = f.room.Publish(ctx, 6, f.settings)
	require.NoError(t, err)
	require.NoError(t, f.room.Recover(ctx, 6, 10*time.Minute))
	st, err := f.room.Status(ctx, 6, 3, places[2])
	require.NoError(t, err)
	require.Equal(t, StateWaiting, st.State)
	st, err = f.room.Status(ctx, 6, 1, places[0])
	require.NoError(t, err)
	require.Equal(t, int64(1), st.Position, "fan 1 is back ahead of fan 3")
}

// TestStatusReadsSettingsPublishedWithoutTheirCopy: a room whose settings
// were published before Publish copied them into st (a controller of the
// previous version, during a deployment) still answers a status from cfg
// instead of calling the room closed.
func TestStatusReadsSettingsPublishedWithoutTheirCopy(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 17, Settings{Ceiling: 4, ActiveTTL: 2 * time.Minute})
	ctx := context.Background()
	f.clock.add(time.Minute)
	_, _, err := f.room.Draw(ctx, 17)
	require.NoError(t, err)
	for a := int64(1); a <= 2; a++ {
		_, err = f.room.Join(ctx, 17, a, 0)
		require.NoError(t, err)
	}
	require.NoError(t, f.rdb.HDel(ctx, f.room.keys(17).st, "enabled", "set_ceiling", "active_ttl").Err())
	st, err := f.room.Status(ctx, 17, 2, 0)
	require.NoError(t, err)
	require.Equal(t, StateWaiting, st.State)
	require.Equal(t, 30*time.Second, st.ETA, "one ahead, no admissions yet: the ceiling of 4 turns over every 2 minutes")
}

func TestCeilingAdaptsToBackendHealth(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 7, Settings{Ceiling: 100})
	ctx := context.Background()
	for a := int64(1); a <= 400; a++ {
		_, err := f.room.Join(ctx, 7, a, 0)
		require.NoError(t, err)
	}
	f.clock.add(time.Minute)
	res, err := f.room.Tick(ctx, 7, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 100, res.Ceiling)
	// Slow holds: the ceiling backs off multiplicatively, once per second
	// however often the controller ticks.
	for range 10 {
		require.NoError(t, f.room.RecordHold(ctx, 7, 900*time.Millisecond, HoldOK))
	}
	res, err = f.room.Tick(ctx, 7, TickInput{Interval: 250 * time.Millisecond})
	require.NoError(t, err)
	require.EqualValues(t, 100, res.Ceiling, "judged at most once a second")
	f.clock.add(time.Second)
	res, err = f.room.Tick(ctx, 7, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 70, res.Ceiling)
	for range 10 {
		require.NoError(t, f.room.RecordHold(ctx, 7, 10*time.Millisecond, HoldFailed))
	}
	f.clock.add(time.Second)
	res, err = f.room.Tick(ctx, 7, TickInput{Interval: time.Second})
	require.NoError(t, err)
	require.EqualValues(t, 49, res.Ceiling, "errors back off too")
	// Healthy and full: additive increase, never above the configured ceiling.
	for range 20 {
		require.NoError(t, f.room.RecordHold(ctx, 7, 20*time.Millisecond, HoldOK))
		f.clock.add(time.Second)
		res, err = f.room.Tick(ctx, 7, TickInput{Interval: time.Second})
		require.NoError(t, err)
		if res.Admitted > 0 {
			require.LessOrEqual(t, res.Active, res.Ceiling, "admission never passes the current ceiling")
		}
	}
	require.EqualValues(t, 100, res.Ceiling)
}

func TestLeaseKeepsOneTickerPerEvent(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 8, Settings{Ceiling: 1})
	ctx := context.Background()
	ok, err := f.room.Lease(ctx, 8, "a", time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	ok, _ = f.room.Lease(ctx, 8, "b", time.Second)
	require.False(t, ok, "another controller skips while the lease lasts")
	ok, _ = f.room.Lease(ctx, 8, "a", time.Second)
	require.True(t, ok, "the holder renews")
}

// TestServedOrGivenUpPlacesAreNeverRestored: a signed queue ticket brings a
// place back only when Redis lost it. A place admitted, left, expired or
// abandoned is gone; joining again goes to the back.
func TestServedOrGivenUpPlacesAreNeverRestored(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 11, Settings{Ceiling: 1, ActiveTTL: 2 * time.Minute, AdmissionTTL: 3 * time.Minute, Abandon: 30 * time.Minute})
	ctx := context.Background()
	drawThenJoin(t, f, 11, 5)
	tick := func(paused bool) TickResult {
		t.Helper()
		res, err := f.room.Tick(ctx, 11, TickInput{Interval: time.Second, Paused: paused})
		require.NoError(t, err)
		return res
	}
	rejoin := func(account, ticket, want int64) {
		t.Helper()
		p, err := f.room.Join(ctx, 11, account, ticket)
		require.NoError(t, err)
		require.Equal(t, StateWaiting, p.State)
		require.Equal(t, want, p.Number, "fan %d's ticket for place %d must not bring it back", account, ticket)
	}
	require.EqualValues(t, 1, tick(false).Admitted)

	// Admitted, then left: back of the line, not place 1.
	require.NoError(t, f.room.Leave(ctx, 11, 1))
	rejoin(1, 1, 6)

	// A waiting fan who left gave the place up: its ticket restores nothing.
	require.NoError(t, f.room.Leave(ctx, 11, 2))
	st, err := f.room.Status(ctx, 11, 2, 2)
	require.NoError(t, err)
	require.Equal(t, StateNone, st.State)
	rejoin(2, 2, 7)

	// Admitted, then the turn ran out.
	require.EqualValues(t, 1, tick(false).Admitted)
	st, err = f.room.Status(ctx, 11, 3, 3)
	require.NoError(t, err)
	require.Equal(t, StateAdmitted, st.State)
	f.clock.add(2*time.Minute + time.Millisecond)
	tick(true)
	st, err = f.room.Status(ctx, 11, 3, 3)
	require.NoError(t, err)
	require.Equal(t, StateExpired, st.State, "the slot is over, whatever the pickup window says")
	rejoin(3, 3, 8)

	// Dropped for missed heartbeats: fan 5 keeps polling, the others do not.
	f.clock.add(29 * time.Minute)
	_, err = f.room.Status(ctx, 11, 5, 5)
	require.NoError(t, err)
	f.clock.add(2 * time.Minute)
	tick(true)
	st, err = f.room.Status(ctx, 11, 4, 4)
	require.NoError(t, err)
	require.Equal(t, StateNone, st.State, "an abandoned place is not restored by its ticket")
	rejoin(4, 4, 9)
	require.Equal(t, []int64{5, 4}, inLine(t, f, 11), "the fan who kept waiting stays ahead")
}

// TestATurnEndsWithItsSlot: the admission token's lifetime is the slot's
// (not the longer pickup window), and leaving or buying ends the turn for
// holds at once, whatever token the fan kept, so the accounts able to hold
// never outnumber the ceiling.
func TestATurnEndsWithItsSlot(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 12, Settings{Ceiling: 2, ActiveTTL: 10 * time.Minute, AdmissionTTL: 15 * time.Minute, Abandon: time.Hour})
	ctx := context.Background()
	admittedAt := f.clock.now().Add(time.Minute)
	require.EqualValues(t, 2, drawThenTick(t, f, 12, 8).Admitted)
	st, err := f.room.Status(ctx, 12, 1, 0)
	require.NoError(t, err)
	require.Equal(t, StateAdmitted, st.State)
	require.Equal(t, admittedAt.Add(10*time.Minute).UnixMilli(), st.AdmitTill.UnixMilli(), "the token lasts as long as the slot")

	turns := map[int64]int64{} // the turn of the last token each fan picked up
	pickUp := func() {
		t.Helper()
		for a := int64(1); a <= 8; a++ {
			st, err := f.room.Status(ctx, 12, a, 0)
			require.NoError(t, err)
			if st.State == StateAdmitted {
				require.Positive(t, st.Turn)
				turns[a] = st.Turn
			}
		}
	}
	canHold := func() []int64 {
		t.Helper()
		var out []int64
		for a := int64(1); a <= 8; a++ {
			if turns[a] == 0 {
				continue
			}
			_, err := f.room.CheckHold(ctx, 12, a, Admission{Turn: turns[a], Expires: f.clock.now().Add(time.Hour)}, 1000, 1000)
			if err == nil {
				out = append(out, a)
			} else {
				require.ErrorIs(t, err, ErrTurnOver)
			}
		}
		return out
	}
	tick := func() TickResult {
		t.Helper()
		res, err := f.room.Tick(ctx, 12, TickInput{Interval: time.Second})
		require.NoError(t, err)
		pickUp()
		return res
	}
	pickUp()
	require.Equal(t, []int64{1, 2}, canHold())
	require.NoError(t, f.room.Leave(ctx, 12, 1))
	require.EqualValues(t, 1, tick().Admitted)
	require.Equal(t, []int64{2, 3}, canHold(), "fan 1 left: its token is worthless, fan 3 has the slot")
	_, err = f.room.Join(ctx, 12, 1, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, canHold(), "joining again is a place at the back, not a turn")

	// Churn: whoever leaves, the accounts able to hold stay within the ceiling.
	for range 3 {
		require.NoError(t, f.room.Leave(ctx, 12, canHold()[0]))
		res := tick()
		require.LessOrEqual(t, res.Active, int64(2))
		require.LessOrEqual(t, len(canHold()), 2)
		p, err := f.room.Progress(ctx, 12)
		require.NoError(t, err)
		require.LessOrEqual(t, p.Active, p.Ceiling)
	}
	// Fan 1's second turn comes: the token of its first turn still buys nothing.
	for _, a := range []int64{5, 6, 7, 8} {
		require.NoError(t, f.room.Leave(ctx, 12, a))
	}
	old := turns[1]
	tick()
	require.NotEqual(t, old, turns[1], "fan 1 was admitted again")
	_, err = f.room.CheckHold(ctx, 12, 1, Admission{Turn: old, Expires: f.clock.now().Add(time.Hour)}, 1000, 1000)
	require.ErrorIs(t, err, ErrTurnOver, "a token belongs to one turn")
	require.Equal(t, []int64{1}, canHold())

	f.clock.add(10 * time.Minute)
	require.Empty(t, canHold(), "a slot that ran out ends the turn even before a tick prunes it")
}

// TestAdmittedFansKeepTheirTurnAfterAFailover: Redis lost the room; a fan
// with a valid token (the caller checked it) takes its slot back as the
// token says and counts against the ceiling again, once; after leaving it
// cannot.
func TestAdmittedFansKeepTheirTurnAfterAFailover(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 13, Settings{Ceiling: 2})
	ctx := context.Background()
	require.EqualValues(t, 2, drawThenTick(t, f, 13, 3).Admitted)
	st, err := f.room.Status(ctx, 13, 1, 0)
	require.NoError(t, err)
	f.loseRoom(t, 13)
	_, err = f.room.Publish(ctx, 13, f.settings)
	require.NoError(t, err)
	_, err = f.room.CheckHold(ctx, 13, 1, Admission{Turn: st.Turn, Expires: st.AdmitTill}, 10, 1)
	require.ErrorIs(t, err, ErrTurnOver, "not recovering yet: no slot, no turn")
	require.NoError(t, f.room.Recover(ctx, 13, 10*time.Minute))
	_, err = f.room.CheckHold(ctx, 13, 1, Admission{Turn: st.Turn, Expires: st.AdmitTill}, 10, 1)
	require.NoError(t, err)
	p, err := f.room.Progress(ctx, 13)
	require.NoError(t, err)
	require.EqualValues(t, 1, p.Active, "the slot counts again")
	again, err := f.room.Status(ctx, 13, 1, 0)
	require.NoError(t, err)
	require.Equal(t, StateAdmitted, again.State)
	require.Equal(t, st.Turn, again.Turn, "the same turn, ending when its token does")
	require.Equal(t, st.AdmitTill, again.AdmitTill)
	require.NoError(t, f.room.Leave(ctx, 13, 1))
	_, err = f.room.CheckHold(ctx, 13, 1, Admission{Turn: st.Turn, Expires: st.AdmitTill}, 10, 1)
	require.ErrorIs(t, err, ErrTurnOver)
}

func TestLoweredCeilingAppliesAtTheNextTick(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 14, Settings{Ceiling: 100, Abandon: time.Hour})
	ctx := context.Background()
	res := joinThenTick(t, f, 14, 30)
	require.EqualValues(t, 30, res.Admitted)
	require.EqualValues(t, 100, res.Ceiling)
	for a := int64(31); a <= 60; a++ {
		_, err := f.room.Join(ctx, 14, a, 0)
		require.NoError(t, err)
	}
	s := f.settings
	s.Ceiling = 10
	_, err := f.room.Publish(ctx, 14, s)
	require.NoError(t, err)
	tick := func() TickResult {
		t.Helper()
		res, err := f.room.Tick(ctx, 14, TickInput{Interval: 250 * time.Millisecond})
		require.NoError(t, err)
		return res
	}
	res = tick() // within the second: the adaptive ceiling is not judged
	require.Zero(t, res.Admitted, "30 shop under a ceiling of 10: nobody more")
	require.EqualValues(t, 10, res.Ceiling)
	p, err := f.room.Progress(ctx, 14)
	require.NoError(t, err)
	require.EqualValues(t, 10, p.Ceiling)
	f.clock.add(time.Second)
	res = tick() // judged: healthy, yet never above the setting
	require.Zero(t, res.Admitted)
	require.EqualValues(t, 10, res.Ceiling)
	for a := int64(1); a <= 25; a++ {
		require.NoError(t, f.room.Leave(ctx, 14, a))
	}
	res = tick()
	require.EqualValues(t, 5, res.Admitted, "refilled up to the lowered ceiling")
	require.EqualValues(t, 10, res.Active)
	require.NoError(t, f.room.RecordHold(ctx, 14, time.Second, HoldOK))
	f.clock.add(time.Second)
	require.EqualValues(t, 7, tick().Ceiling, "an unhealthy backend backs off from the lowered ceiling")
}

func TestHoldsAreRateLimitedPerAccountAndEvent(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 15, Settings{Ceiling: 1})
	ctx := context.Background()
	for range 3 {
		wait, err := f.room.CheckHold(ctx, 15, 1, Admission{}, 3, 0.5)
		require.NoError(t, err)
		require.Zero(t, wait)
	}
	wait, err := f.room.CheckHold(ctx, 15, 1, Admission{}, 3, 0.5)
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, wait, "the burst is spent: one hold every 2 s")
	wait, err = f.room.CheckHold(ctx, 15, 2, Admission{}, 3, 0.5)
	require.NoError(t, err)
	require.Zero(t, wait, "another account has its own bucket")
	wait, err = f.room.CheckHold(ctx, 16, 1, Admission{}, 3, 0.5)
	require.NoError(t, err)
	require.Zero(t, wait, "and so has another event")
	f.clock.add(2 * time.Second)
	wait, err = f.room.CheckHold(ctx, 15, 1, Admission{}, 3, 0.5)
	require.NoError(t, err)
	require.Zero(t, wait)
}
