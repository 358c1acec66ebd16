package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
)

// roomEvent creates an event behind a waiting room whose line opens at
// opens, its sale an hour later, in the given status.
func (s *site) roomEvent(t *testing.T, name string, opens time.Time, status event.Status) int64 {
	t.Helper()
	spec := organizer.EventSpec{VenueID: s.layout.VenueID, LayoutVersion: s.layout.Version, Name: name, Category: "music",
		Description: "End-to-end test event.", StartsAt: opens.Add(72 * time.Hour), SaleStartsAt: opens.Add(time.Hour),
		SaleEndsAt: opens.Add(48 * time.Hour), HoldTTL: 480, MaxPerHold: 6, MaxPerAccount: 6,
		PriceLevels: []event.PriceLevel{{Code: "A", Name: "Lower central", PriceCents: 45000}, {Code: "B", Name: "Lower side", PriceCents: 32000},
			{Code: "C", Name: "Upper", PriceCents: 18000}, {Code: "GA", Name: "Floor", PriceCents: 25000}},
		WaitingRoom: event.WaitingRoom{Enabled: true, PrequeueOpensAt: &opens, Ceiling: 1, ActiveTTL: 600, AdmissionTTL: 900}}
	e, err := s.org.CreateEvent(context.Background(), s.organizer, spec)
	require.NoError(t, err)
	require.NoError(t, s.org.SetStatus(context.Background(), e.ID, status))
	return e.ID
}

// A fan early for the line reads when it opens, in their own time, and a
// fan late for the sale reads that it is over: neither sees a failure nor
// a page that asks the API again and again.
func TestWaitingRoomNotOpenYetOrOver(t *testing.T) {
	s := newSite(t)
	opens := time.Now().Add(3 * time.Hour).Truncate(time.Minute)
	early := s.roomEvent(t, "Opens Later", opens, event.OnSale)
	over := s.roomEvent(t, "Already Over", time.Now().Add(-2*time.Hour), event.Closed)

	ctx := s.tab(t)
	s.signUp(t, ctx, fmt.Sprintf("/events/%d/queue", early))
	local := evaluate[string](t, ctx, fmt.Sprintf(
		`new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(%q))`, opens.UTC().Format(time.RFC3339)))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.WaitVisible(`//p[@class="lead" and contains(., "The waiting room opens")]`),
	))
	require.Contains(t, text(t, ctx, "p.lead"), local, "the opening time, as the fan's clock reads it")
	require.NotContains(t, text(t, ctx, "main"), "Something went wrong")
	joins := func() int {
		return evaluate[int](t, ctx, `performance.getEntriesByType('resource').filter((r) => r.name.endsWith('/queue')).length`)
	}
	before := joins()
	time.Sleep(3 * time.Second)
	require.Equal(t, before, joins(), "the page does not ask again before the line opens")
	accessible(t, ctx, "waiting room not open")

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(s.st.URL+fmt.Sprintf("/events/%d/queue", over)),
		chromedp.WaitVisible(`//p[@class="lead" and contains(., "sale for this event is over")]`),
	))
	require.NotContains(t, text(t, ctx, "main"), "Something went wrong")
	require.NotContains(t, text(t, ctx, "main"), "Leave the line")
}
