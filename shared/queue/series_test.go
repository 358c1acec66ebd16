package queue

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSeriesCountsWhatAlreadyRuns: joins (new ones only), admissions and
// the tick's gauges, hold outcomes and incidents land in the step of the
// room's clock; older steps stay apart.
func TestSeriesCountsWhatAlreadyRuns(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 40, Settings{Ceiling: 2})
	ctx := context.Background()
	for a := int64(1); a <= 3; a++ {
		_, err := f.room.Join(ctx, 40, a, 0)
		require.NoError(t, err)
	}
	_, err := f.room.Join(ctx, 40, 1, 0)
	require.NoError(t, err)  // a repeated join is not a new one
	f.clock.add(time.Minute) // the draw
	_, err = f.room.Tick(ctx, 40, TickInput{Interval: time.Second})
	require.NoError(t, err)
	_, err = f.room.Join(ctx, 40, 4, 0)
	require.NoError(t, err)
	require.NoError(t, f.room.RecordHold(ctx, 40, 30*time.Millisecond, HoldOK))
	require.NoError(t, f.room.RecordHold(ctx, 40, 3*time.Second, HoldTaken))
	require.NoError(t, f.room.RecordHold(ctx, 40, 5*time.Millisecond, HoldRefused))
	require.NoError(t, f.room.CountIncident(ctx, IncidentHTTP5xx))
	require.NoError(t, f.room.SetGauges(ctx, 40, map[string]int64{"revenue": 1234}))

	b, err := f.room.Series(ctx, 40, 7)
	require.NoError(t, err)
	require.Len(t, b, 7)
	now, before := b[6], b[0]
	require.EqualValues(t, 3, before.Joins, "three fans joined a minute ago, once each")
	require.EqualValues(t, 1, now.Joins)
	require.EqualValues(t, 2, now.Admitted)
	require.True(t, now.Sampled)
	require.EqualValues(t, 1, now.Waiting, "the tick saw one waiting (the fourth joined after it)")
	require.EqualValues(t, 2, now.Active)
	require.EqualValues(t, 2, now.Ceiling)
	require.EqualValues(t, 1, now.Holds)
	require.EqualValues(t, 1, now.Taken)
	require.Zero(t, now.Failed)
	require.EqualValues(t, 1, now.HTTP5xx)
	require.EqualValues(t, 1234, now.Gauges["revenue"])
	require.Equal(t, 5*time.Second, Percentile(now.Latency, 0.99), "p99 of 5 ms, 30 ms and 3 s: the 3 s hold's bucket, up to 5 s")
	require.Equal(t, 50*time.Millisecond, Percentile(now.Latency, 0.5))
	require.Equal(t, SeriesStep, b[6].At.Sub(b[5].At))
}

// TestSeriesForgetsOldStepsAfterSilence: writes an hour and more apart (a
// quiet event's holds, a rare PSP error) leave no step older than the
// window in either hash, whether the writer is a script (the tick) or a
// pipeline (holds, gauges, incidents); steady writes keep the hash to the
// window too.
func TestSeriesForgetsOldStepsAfterSilence(t *testing.T) {
	t.Parallel()
	f := newRoom(t, 41, Settings{Ceiling: 2})
	ctx := context.Background()
	k := f.room.keys(41)
	requireWindow := func(key, when string) {
		t.Helper()
		first := stepOf(f.clock.now().Add(-seriesKeep))
		fields, err := f.rdb.HKeys(ctx, key).Result()
		require.NoError(t, err)
		for _, fld := range fields {
			step, _, ok := strings.Cut(fld, ":")
			if !ok {
				continue // the trimmed mark
			}
			n, err := strconv.ParseInt(step, 10, 64)
			require.NoError(t, err, fld)
			require.GreaterOrEqual(t, n, first, "%s: field %s of %s is older than the window", when, fld, key)
		}
	}
	write := func() {
		require.NoError(t, f.room.RecordHold(ctx, 41, 20*time.Millisecond, HoldOK))
		require.NoError(t, f.room.SetGauges(ctx, 41, map[string]int64{"revenue": 7}))
		require.NoError(t, f.room.CountIncident(ctx, IncidentPSP))
	}
	write()
	for _, gap := range []time.Duration{seriesKeep + 3*time.Minute, 30 * time.Minute, 45 * time.Minute, 2 * seriesKeep} {
		f.clock.add(gap)
		write()
		requireWindow(k.ts, "after a pipeline write")
		requireWindow(f.room.globalSeries(), "after an incident")
	}
	f.clock.add(seriesKeep + time.Minute)
	_, err := f.room.Tick(ctx, 41, TickInput{Interval: time.Second})
	require.NoError(t, err)
	requireWindow(k.ts, "after a tick")

	// Steady writes, one per step for two windows: the hash holds one
	// window of steps.
	for range 2 * int(seriesKeep/SeriesStep) {
		f.clock.add(SeriesStep)
		require.NoError(t, f.room.RecordHold(ctx, 41, 20*time.Millisecond, HoldOK))
	}
	requireWindow(k.ts, "after steady writes")
	n, err := f.rdb.HLen(ctx, k.ts).Result()
	require.NoError(t, err)
	require.LessOrEqual(t, n, int64(seriesKeep/SeriesStep+2)*2+1, "two fields a step (holds, one latency bucket) and the mark")
}
