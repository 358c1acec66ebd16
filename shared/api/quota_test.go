package api_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/syncbuf"
)

// closedRedis is a Redis client on a port nothing listens on: every
// command fails at once, as with the limiter's Redis down.
func closedRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// TestWebhooksAreConfirmedWithoutTheQuotaWhenItsRedisIsDown: a webhook's
// confirmation (the payment read back from the PSP) normally spends from
// the Redis PSP quota; with that Redis unavailable it is made without the
// quota (logged), so payments keep landing while holds would expire.
func TestWebhooksAreConfirmedWithoutTheQuotaWhenItsRedisIsDown(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana-quota@example.com")
	_, order := s.hold(t, ana, "h", s.seats[0])
	p := s.checkout(t, ana, order)
	s.sim.SetFaults(pspsim.Faults{WebhookOutage: true}) // this shop's webhook hears nothing
	_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)

	var logs syncbuf.Buffer
	cfg := s.app.Config
	down := app.NewOrders(app.Orders{DB: s.app.Databases, Redis: closedRedis(t), Prefix: cfg.RedisPrefix, PublicURL: cfg.PublicURL,
		PSP: cfg.PSP, TicketKey: cfg.TicketKey, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	body := s.sim.EventBody("checkout.session.completed", p.ID)
	ev, err := psp.ParseWebhook([]string{s.secret}, body, pspsim.Sign(s.secret, time.Now(), body))
	require.NoError(t, err)
	require.NoError(t, down.HandleEvent(context.Background(), ev), "confirmed without the quota")
	require.Equal(t, "paid", s.orderStatus(t, ana, order).Body["status"])
	require.Contains(t, logs.String(), "psp quota unknown: confirming without it")
	s.requireMoneyConserved(t)
}

// TestConsoleRefundWhenTheQuotaIsSpent: a console refund while the PSP
// quota is spent asks nothing and answers 429 psp-busy with Retry-After
// (it used to wait for a token, holding the order's transaction).
func TestConsoleRefundWhenTheQuotaIsSpent(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, func(c *config.Config) { c.PSPRate = 1 }) // a token every 1.25 s

	org := s.organizerOf(t)
	_, order, _ := s.paidOrder(t, "ana-spent@example.com", s.seats[0])
	refund := "/api/orders/" + itoa(order) + "/refund"

	// Spend the quota's bucket as the shop sizes it (1 token, 0.8/s).
	lim := ratelimit.New(s.app.Redis, s.app.Config.RedisPrefix)
	for {
		wait, err := lim.Allow(context.Background(), "psp", 1, 0.8)
		require.NoError(t, err)
		if wait > 0 {
			break
		}
	}
	before := s.refundCalls.Load()
	r := org.do(http.MethodPost, refund, nil)
	requireProblem(t, r, http.StatusTooManyRequests, "psp-busy")
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.Positive(t, retry)
	require.Equal(t, before, s.refundCalls.Load(), "nothing asked")
	require.Empty(t, refundFailures(t, org), "nothing to set aside: nothing was asked")
	require.Zero(t, s.errors5xx.Load())
}
