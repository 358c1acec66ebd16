package inventory_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/shardstore"
)

// TestHoldsPlanOnlyTheirCall: once a connection has held once, a seat or
// GA hold plans nothing more in the prepared mode (the take is prepared,
// the limit check's statements are PL/pgSQL's), and only its own short
// call statement in the proxy mode (unnamed, so planned on every
// execution; the take function keeps its plans). The server reports every
// plan it makes with debug_print_plan. The limit check used to count
// tickets transferred in through a SQL function, which PostgreSQL parses
// and plans on every call: a quarter of a hold's CPU on the shard (shard
// migration 00029, docs/database.md).
func TestHoldsPlanOnlyTheirCall(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, 40, 1000, func(s *organizer.EventSpec) { s.MaxPerAccount, s.MaxPerHold = 4, 4 })
	account := int64(0)
	for _, mode := range []struct {
		name  string
		calls int // plans per hold: the proxy mode's call statement
	}{{"prepared", 0}, {"proxy", 1}} {
		t.Run(mode.name, func(t *testing.T) {
			plans := 0
			cfg := f.shard.Config().Copy() // the prepared mode's: Warm on connect
			cfg.MinConns, cfg.MaxConns = 0, 1
			cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
				if n.Message == "plan:" {
					plans++
				}
			}
			if mode.calls > 0 { // as app.poolConfig sets CATRACA_DB_PROXY's pools
				cfg.AfterConnect = nil
				cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
			}
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			require.NoError(t, err)
			defer pool.Close()
			st := shardstore.New(pool)
			ga, found, err := st.PoolOf(ctx, f.event.ID, "FLOOR")
			require.NoError(t, err)
			require.True(t, found)
			hold := func(kind string) {
				account++
				h := shardstore.NewHold{EventID: f.event.ID, Account: account, TTL: 300, Key: strconv.FormatInt(account, 10),
					Hash: []byte{1}, Currency: f.event.Currency, MaxPerAccount: 4, Version: f.event.Version}
				if kind == "seat" {
					_, err = st.TakeSeats(ctx, h, f.seats[2*account:2*account+2])
				} else {
					_, err = st.TakeGA(ctx, h, ga, 1)
				}
				require.NoError(t, err)
			}
			for _, kind := range []string{"seat", "ga"} {
				hold(kind) // the session's first: PL/pgSQL compiles and plans
				_, err := pool.Exec(ctx, `SET debug_print_plan = on; SET client_min_messages = log`)
				require.NoError(t, err)
				plans = 0
				const holds = 3
				for range holds {
					hold(kind)
				}
				_, err = pool.Exec(ctx, `RESET debug_print_plan; RESET client_min_messages`)
				require.NoError(t, err)
				require.Equal(t, holds*mode.calls, plans, "%s holds: plans made by %d holds on one warm connection", kind, holds)
			}
		})
	}
}
