package inventory_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/tools/testenv"
)

// TestProxyHoldsRunTheTakeFunctions: behind the transaction-pooling proxy
// (CATRACA_DB_PROXY through PgBouncer) seat holds and GA holds of pools of
// one slot and of several run the take functions of shard migration 00018,
// whose plans the pooled server connections keep, and not the takes'
// statements, which would be planned on every execution: with a function
// renamed away the proxied hold fails naming it, while the prepared mode,
// which sends the statement itself, still holds.
func TestProxyHoldsRunTheTakeFunctions(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		function string
		slots    int // GA slots of the event's pools (0: seats)
	}{{"hold_take_seats", 0}, {"hold_take_ga_one", 1}, {"hold_take_ga_many", 8}} {
		t.Run(c.function, func(t *testing.T) {
			f := newFixture(t, 20, 1000, func(s *organizer.EventSpec) { s.GASlots = max(c.slots, 1) })
			proxied, err := app.Open(ctx, testenv.Proxied(t, f.app.Config), app.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			t.Cleanup(proxied.Close)
			hold := func(a *app.App, account int64) error {
				req := inventory.Request{Account: account, Key: strconv.FormatInt(account, 10), Pool: "FLOOR", Quantity: 1}
				if c.slots == 0 {
					req = inventory.Request{Account: account, Key: req.Key, Seats: f.seats[account : account+1]}
				}
				_, _, err := a.Inventory.Hold(ctx, f.event, req)
				return err
			}
			require.NoError(t, hold(proxied, 1), "through the proxy with the function in place")
			_, err = f.shard.Exec(ctx, `ALTER FUNCTION `+c.function+` RENAME TO renamed_away`)
			require.NoError(t, err)
			require.ErrorContains(t, hold(proxied, 2), c.function, "a proxied hold that does not call %s", c.function)
			require.NoError(t, hold(f.app, 3), "the prepared mode sends the statement itself")
		})
	}
}
