package demo_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/tools/demo"
	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
)

// make dev's demo: the organizer logs in to a console that lists their
// venues and events, one of them on sale with seats already sold.
func TestDemoOrganizerSeesASaleInProgress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	st, err := stack.Start(ctx, cfg, stack.Options{AdmitInterval: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); st.Close() })
	a := st.App
	seed, err := demo.Seed(ctx, a.Accounts, pgstore.New(a.Catalog), organizer.New(a.Catalog, a.Shards), a.Events)
	require.NoError(t, err)
	require.True(t, seed.Created)
	paid, err := demo.Sell(ctx, st.URL, seed.OnSale, 3)
	require.NoError(t, err)
	require.Equal(t, 3, paid)

	org := fan.New(st.URL, nil)
	require.NoError(t, org.LogIn(ctx, demo.OrganizerEmail, demo.Password))
	var venues struct{ Venues []any }
	require.NoError(t, org.Call(ctx, "venues", http.MethodGet, "/api/venues", nil, &venues))
	require.Len(t, venues.Venues, 2, "the demo venues are the organizer's")
	var events struct {
		Events []struct {
			ID     int64
			Status string
		}
	}
	require.NoError(t, org.Call(ctx, "events", http.MethodGet, "/api/organizer/events", nil, &events))
	require.Len(t, events.Events, 5)
	var progress struct{ Total int }
	require.NoError(t, org.Call(ctx, "refunds", http.MethodGet, fmt.Sprintf("/api/events/%d/refunds", seed.OnSale), nil, &progress))
	require.Equal(t, 3, progress.Total, "three paid orders on the sale in progress")

	again, err := demo.Seed(ctx, a.Accounts, pgstore.New(a.Catalog), organizer.New(a.Catalog, a.Shards), a.Events)
	require.NoError(t, err)
	require.False(t, again.Created)
	require.Equal(t, seed.OnSale, again.OnSale, "a second run finds the same sale")
}
