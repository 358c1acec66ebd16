package entry_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
)

// TestCancelRacesEntryChanges: organizers change entry rules and grant
// door staff while the event is cancelled. A change that succeeds must
// have landed before the cancel committed, so what the shard holds when
// the cancel returns is what it holds at the end. Checked then written
// without the event row's lock, a change that read the event before the
// cancel committed landed after it.
func TestCancelRacesEntryChanges(t *testing.T) {
	w := newWorld(t)
	l, err := w.app.Organizer.Event(w.ctx, w.org, w.event)
	require.NoError(t, err)
	const trials, setters, granters, grants = 12, 4, 2, 40
	_, err = w.app.Catalog.Exec(w.ctx, `INSERT INTO accounts (email, password_hash, name)
		SELECT 'staff' || g || '@example.com', 'x', 'Staff ' || g FROM generate_series(1, $1) g`, trials*granters*grants)
	require.NoError(t, err)
	state := func(ev int64) string {
		var s string
		require.NoError(t, w.pool.QueryRow(w.ctx, `SELECT coalesce((SELECT row(e.*)::text FROM entry_settings e WHERE event_id = $1), '')
			|| ' staff ' || (SELECT count(*) FROM door_staff WHERE event_id = $1)`, ev).Scan(&s))
		return s
	}
	late := 0
	for trial := range trials {
		ev := w.makeEvent(t, l.VenueID, fmt.Sprintf("Cancelled %d", trial))
		var wg sync.WaitGroup
		errs := make(chan error, setters+granters)
		for g := range setters {
			wg.Go(func() {
				for n := 0; ; n++ {
					at := time.Unix(int64(g*100_000+n), 0)
					if _, err := w.svc.SetSettings(w.ctx, ev, w.org, entry.Settings{DoorsOpenAt: &at, MaxTransfers: 1}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		for g := range granters {
			wg.Go(func() {
				for n := range grants {
					email := fmt.Sprintf("staff%d@example.com", (trial*granters+g)*grants+n+1)
					if _, _, err := w.svc.Grant(w.ctx, ev, w.org, email); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			})
		}
		time.Sleep(time.Duration(trial%4+2) * time.Millisecond)
		_, err := w.app.Organizer.ChangeStatus(w.ctx, w.org, ev, nil, string(event.Cancelled))
		require.NoError(t, err)
		atCancel := state(ev)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				require.ErrorIs(t, err, entry.ErrCancelled, "a change after the cancel is refused, nothing else")
			}
		}
		if state(ev) != atCancel {
			late++
		}
	}
	require.Zero(t, late, "trials where an entry change landed after the cancel committed")
}
