package onsale

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/stack"
	"github.com/catraca/catraca/tools/testenv"
)

// TestShortOnSaleWithPSPOutage is the short chaos run of make test: a few
// hundred fans, a small venue, the PSP down for 5 s mid-sale.
func TestShortOnSaleWithPSPOutage(t *testing.T) {
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	cfg.PSPRate = 100
	Tune(&cfg)
	st, err := stack.Start(context.Background(), cfg, stack.Options{AdmitInterval: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	rep, err := Run(context.Background(), st, testenv.Servers(), Options{
		Fans: 400, Seats: 100, GA: 40, Ceiling: 40, Workers: 32, PSPRate: 100, DeclineRate: 0.1, AbandonRate: 0.05,
		HoldTTL: 15, ActiveTTL: 30, Chaos: "psp-outage", Deadline: 3 * time.Minute,
		Progress: func(s Sample) {
			t.Logf("t=%3.0fs waiting %d active %d admitted %d sold %d errors %d", s.T, s.Waiting, s.Active, s.Admitted, s.Sold, s.Errors)
		}})
	require.NoError(t, err)
	t.Log("\n" + rep.Markdown())
	require.Empty(t, rep.Violations)
	require.Positive(t, rep.Sold)
	require.LessOrEqual(t, rep.MaxActive, int64(40))
	require.Greater(t, rep.Sold, rep.Tickets/2, "most tickets sell")
	require.Contains(t, rep.ChaosEvents[0], "psp down")
}

// TestOnSaleThroughRedisFailover plays a short on-sale on a private Redis
// Cluster whose event slot fails over twice mid-sale (CLUSTER FAILOVER,
// then a killed primary): the waiting room refuses while no primary
// answers and resumes, and the sale's invariants hold (nothing sold twice,
// every paid order ticketed, places conserved).
func TestOnSaleThroughRedisFailover(t *testing.T) {
	if !testenv.OnCluster() {
		t.Skip("runs in the cluster pass of make test (CATRACA_TEST_REDIS=cluster): it starts a private Redis Cluster")
	}
	c, err := localenv.FreeCluster(t.TempDir())
	require.NoError(t, err)
	c.NodeTimeout = time.Second
	require.NoError(t, c.Up(context.Background()))
	t.Cleanup(func() { c.Down() })
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	cfg.RedisAddr, cfg.RedisCluster = strings.Join(c.Addrs(), ","), true
	cfg.PSPRate = 100
	Tune(&cfg)
	st, err := stack.Start(context.Background(), cfg, stack.Options{AdmitInterval: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	rep, err := Run(context.Background(), st, testenv.Servers(), Options{
		Fans: 300, Seats: 80, GA: 30, Ceiling: 30, Workers: 24, PSPRate: 100, DeclineRate: 0.1, AbandonRate: 0.05,
		HoldTTL: 15, ActiveTTL: 30, Chaos: "redis-failover", Cluster: &c, Deadline: 3 * time.Minute})
	require.NoError(t, err)
	t.Log("\n" + rep.Markdown())
	require.Empty(t, rep.Violations)
	require.Greater(t, rep.Sold, rep.Tickets/2, "most tickets sell")
	require.Contains(t, strings.Join(rep.ChaosEvents, "\n"), "redis cluster ok")
}

// TestScalperFarmAccounting plays a small scalper farm (30 bots on 5 cards
// and 3 devices, one collector) among 200 fans, with the defenses on, and
// checks the farm report's ledger: every ticket ends with the farm, a fan
// or unsold, and the tickets transferred to the collector are the farm's.
func TestScalperFarmAccounting(t *testing.T) {
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	cfg.PSPRate = 100
	st, err := stack.Start(context.Background(), cfg, stack.Options{AdmitInterval: 250 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	rep, err := Run(context.Background(), st, testenv.Servers(), Options{
		Fans: 200, Seats: 100, GA: 40, Ceiling: 40, Workers: 32, PSPRate: 100, DeclineRate: 0.05, AbandonRate: 0.05,
		HoldTTL: 15, ActiveTTL: 30, Deadline: 3 * time.Minute,
		Farm: Farm{Bots: 30, Cards: 5, Devices: 3, FamilyShare: 0.02}})
	require.NoError(t, err)
	t.Log("\n" + rep.Markdown())
	require.Empty(t, rep.Violations)
	f := rep.Farm
	require.NotNil(t, f)
	require.Equal(t, rep.Tickets, f.FarmTickets+f.FanTickets+f.Unsold, "every ticket is the farm's, a fan's or unsold")
	require.Positive(t, f.FanTickets)
	require.Positive(t, f.CollectorTickets, "the farm's bots transferred tickets to the collector")
	require.Equal(t, f.FarmTickets, f.BotTickets+f.CollectorTickets, "the collector's tickets are the farm's")
	require.LessOrEqual(t, f.CollectorTickets, int64(4), "transfers in count against the collector's limit")
	require.LessOrEqual(t, f.FarmTickets, int64(5*4), "5 cards pay for at most 4 tickets each")
}
