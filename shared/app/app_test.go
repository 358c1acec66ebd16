package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/searchindex"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// TestSearchIndexTakesItsBoundFromTheConfig: CATRACA_SEARCH_MAX_EVENTS
// reaches the app's search index, which refuses to load a larger catalog.
func TestSearchIndexTakesItsBoundFromTheConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := apptest.New(t, 1, func(c *config.Config) { c.SearchIndex, c.SearchMaxEvents = true, 1 })
	l, err := a.Organizer.ImportLayout(ctx, 0, venue.Stadium("Bound Arena", "Natal", 20, 2))
	require.NoError(t, err)
	for _, name := range []string{"One", "Two"} {
		createEvent(t, a.Organizer, l, name)
	}
	require.ErrorIs(t, a.SearchIndex.Refresh(ctx), searchindex.ErrTooBig, "two events are more than the configured one")
}
