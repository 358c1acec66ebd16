package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/stack"
)

// apiFan is a second fan, driven over HTTP through the same gateway.
type apiFan struct{ *fan.Fan }

func newAPIFan(t *testing.T, base string) apiFan {
	t.Helper()
	f := fan.New(base, nil)
	require.NoError(t, f.SignUp(context.Background(), fmt.Sprintf("api-%d@catraca.dev", time.Now().UnixNano()), "a-long-password", "API Fan"))
	return apiFan{f}
}

// join waits for the room to be published, then takes a place.
func (f apiFan) join(t *testing.T, st *stack.Stack, event int64) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, st.WaitForRoom(ctx, event))
	_, err := fan.Retry(ctx, func() (fan.QueueStatus, error) { return f.Join(ctx, event) })
	require.NoError(t, err)
}

func (f apiFan) waitAdmitted(t *testing.T, event int64) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		st, err := fan.Retry(ctx, func() (fan.QueueStatus, error) { return f.Status(ctx, event) })
		require.NoError(t, err)
		if st.State == "admitted" {
			return
		}
	}
	t.Fatalf("fan %d was not admitted to event %d", f.Account, event)
}

// buyAndLeave holds a standing place, releases it (the turn goes on) and
// leaves the room, which frees the fan's shopping slot for the next in line.
func (f apiFan) buyAndLeave(t *testing.T, event int64) {
	t.Helper()
	ctx := context.Background()
	h, err := f.HoldGA(ctx, event, "FLOOR", 1)
	require.NoError(t, err)
	require.NoError(t, f.Release(ctx, h.HoldID))
	require.NoError(t, f.Leave(ctx, event))
}

// sellEverything puts the whole inventory of an event out of sale, as a
// finished on-sale leaves it.
func sellEverything(t *testing.T, s *site, event int64) {
	t.Helper()
	ctx := context.Background()
	db, err := s.st.App.Shards.ForEvent(ctx, event)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `UPDATE event_seats SET status = 'sold' WHERE event_id = $1`, event)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `UPDATE ga_slots SET remaining = 0 WHERE pool_id IN (SELECT id FROM ga_pools WHERE event_id = $1)`, event)
	require.NoError(t, err)
}
