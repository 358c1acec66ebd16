package queue

import (
	"context"
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
