package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/fan"
)

// apiFan is a second fan, driven over HTTP through the same gateway.
type apiFan struct{ *fan.Fan }

func newAPIFan(t *testing.T, base string) apiFan {
	t.Helper()
	f := fan.New(base, nil)
	require.NoError(t, f.SignUp(context.Background(), fmt.Sprintf("api-%d@catraca.dev", time.Now().UnixNano()), "a-long-password", "API Fan"))
	return apiFan{f}
}

func (f apiFan) join(t *testing.T, event int64) {
	t.Helper()
	// The admission ticker publishes a new room within a tick or two.
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := f.Join(context.Background(), event)
		var e *fan.Error
		if errors.As(err, &e) && (e.Code == "no-waiting-room" || e.Status == 429) && time.Now().Before(deadline) {
			time.Sleep(time.Second)
			continue
		}
		require.NoError(t, err)
		return
	}
}

func (f apiFan) waitAdmitted(t *testing.T, event int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, err := f.Status(context.Background(), event)
		var e *fan.Error
		if !errors.As(err, &e) || e.Status != 429 {
			require.NoError(t, err)
		}
		if st.State == "admitted" {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("fan %d was not admitted to event %d", f.Account, event)
}

// buyAndLeave holds a standing place and releases it, which frees the
// fan's shopping slot for the next in line.
func (f apiFan) buyAndLeave(t *testing.T, event int64) {
	t.Helper()
	ctx := context.Background()
	h, err := f.HoldGA(ctx, event, "FLOOR", 1)
	require.NoError(t, err)
	require.NoError(t, f.Release(ctx, h.HoldID))
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
