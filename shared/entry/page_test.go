package entry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/entry"
)

// TestPageOrderAndLiveCodes: a fan's tickets of four events come a page
// at a time, upcoming events first (soonest first) then past ones (latest
// first), each ticket once; only tickets of the event near its doors
// carry codes, and a cursor that was not given is refused. The pages keep
// the order of the first even when an event turns past in between.
func TestPageOrderAndLiveCodes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tonight, nextMonth, lastWeek, lastYear := w.event, w.other, w.makeEvent(t, w.venue, "Last Week"), w.makeEvent(t, w.venue, "Last Year")
	for ev, at := range map[int64]time.Duration{tonight: 3 * time.Hour, nextMonth: 30 * 24 * time.Hour, lastWeek: -7 * 24 * time.Hour, lastYear: -365 * 24 * time.Hour} {
		_, err := w.app.Catalog.Exec(w.ctx, `UPDATE events SET starts_at = $2 WHERE id = $1`, ev, w.now.Add(at))
		require.NoError(t, err)
	}
	want := append(append(append(w.sell(t, tonight, w.fan, 3), w.sell(t, nextMonth, w.fan, 2)...), w.sell(t, lastWeek, w.fan, 2)...), w.sell(t, lastYear, w.fan, 1)...)

	var got []int64
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5)
		p, err := w.svc.Page(w.ctx, w.fan, cursor, 3)
		require.NoError(t, err)
		require.LessOrEqual(t, len(p.Tickets), 3)
		for _, tk := range p.Tickets {
			got = append(got, tk.ID)
			require.Equal(t, tk.EventID == tonight, len(tk.Codes) == entry.Ahead+1, "ticket %d of event %d: codes only near the doors", tk.ID, tk.EventID)
			require.NotEmpty(t, tk.EventName)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
		if pages == 0 {
			// Tonight's show turns past between two pages: the order of
			// the first page holds, nothing is skipped or repeated.
			w.now = w.now.Add(20 * time.Hour)
		}
	}
	require.Equal(t, want, got)

	for _, bad := range []string{"garbage", "MS4yLjM", "LTEuMi4zLjQ", "%%%", "MDEuMi4zLjQ"} {
		_, err := w.svc.Page(w.ctx, w.fan, bad, 3)
		require.ErrorIs(t, err, entry.ErrBadCursor, bad)
	}
	tk, err := w.svc.Ticket(w.ctx, w.fan, want[3])
	require.NoError(t, err)
	require.Len(t, tk.Codes, entry.Ahead+1, "an upcoming ticket opened shows its codes")
	_, err = w.svc.Ticket(w.ctx, w.staff, want[3])
	require.ErrorIs(t, err, entry.ErrNotFound, "another account's ticket")
	_, err = w.svc.Ticket(w.ctx, w.fan, 1<<40)
	require.ErrorIs(t, err, entry.ErrNotFound)
}
