package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/tools/pspsim"
)

// device returns the device cookie a fan's browser keeps.
func (f *fan) device() string {
	u, _ := url.Parse(f.srv.URL)
	for _, c := range f.client.Jar.Cookies(u) {
		if c.Name == risk.DeviceCookie {
			return c.Value
		}
	}
	return ""
}

// onDevice gives a fan's browser the device cookie of another's: the two
// use one phone.
func (f *fan) onDevice(device string) {
	u, _ := url.Parse(f.srv.URL)
	f.client.Jar.SetCookies(u, []*http.Cookie{{Name: risk.DeviceCookie, Value: device}})
}

// buyWith holds seats for f, checks out and pays with card, and returns
// the order settled.
func (s *shop) buyWith(t *testing.T, f *fan, key, card string, seats ...int64) (int64, response) {
	t.Helper()
	_, orderID := s.hold(t, f, key, seats...)
	p := s.checkout(t, f, orderID)
	_, err := s.sim.Pay(p.ID, card)
	require.NoError(t, err)
	return orderID, s.settled(t, f, orderID)
}

// TestDeviceCookieIsSetOnceAndKept: sign-up sets a first-party, HttpOnly,
// SameSite=Lax device cookie that lasts 400 days (Secure over HTTPS); a
// later log-in from that browser keeps it; a value the API did not make
// is replaced.
func TestDeviceCookieIsSetOnceAndKept(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	f := newFan(t, s.srv)
	r := f.do(http.MethodPost, "/api/accounts", map[string]any{"email": "dev@example.com", "password": "a long enough password", "name": "Dev"},
		"X-Forwarded-Proto", "https")
	require.Equal(t, http.StatusCreated, r.Status)
	var set *http.Cookie
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == risk.DeviceCookie {
			set = c
		}
	}
	require.NotNil(t, set, "sign-up sets the device cookie")
	require.True(t, set.HttpOnly)
	require.True(t, set.Secure, "over HTTPS")
	require.Equal(t, http.SameSiteLaxMode, set.SameSite)
	require.Equal(t, 400*24*3600, set.MaxAge)
	require.Len(t, set.Value, 32)

	g := newFan(t, s.srv)
	g.onDevice(set.Value)
	r = g.do(http.MethodPost, "/api/session", map[string]any{"email": "dev@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, set.Value, g.device(), "the browser's device is kept")

	g.onDevice("not-one-of-ours")
	r = g.do(http.MethodPost, "/api/session", map[string]any{"email": "dev@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status)
	require.NotEqual(t, "not-one-of-ours", g.device())
	require.Len(t, g.device(), 32)
	var devices int
	require.NoError(t, s.app.Catalog.QueryRow(context.Background(), `SELECT count(*) FROM account_devices d JOIN accounts a ON a.id = d.account WHERE a.email = 'dev@example.com'`).Scan(&devices))
	require.Equal(t, 2, devices, "both devices recorded")
}

// TestLinkedAccountsBuyAsOneFan: two accounts used on one device are one
// fan: paying with different cards (the card limit cannot see it), the
// payment that takes them past the event's limit is refunded and the
// order says why (cluster_limit); what is left of the limit still sells.
func TestLinkedAccountsBuyAsOneFan(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia := newFan(t, s.srv)
	bia.onDevice(ana.device())
	bia.signUp("bia@example.com")

	_, r := s.buyWith(t, ana, "a", pspsim.CardVisa, s.seats[0:4]...)
	require.Equal(t, "paid", r.Body["status"], "4 of 6")
	biaOrder, r := s.buyWith(t, bia, "b", pspsim.CardMastercard, s.seats[4:8]...)
	require.Contains(t, []any{"refund_pending", "refunded"}, r.Body["status"], "4 more by the linked account make 8 of 6")
	require.Equal(t, order.ClusterLimit, r.Body["payment"].(map[string]any)["failure"], "the order says why")
	waitUntil(t, 15*time.Second, func() bool { return s.orderStatus(t, bia, biaOrder).Body["status"] == "refunded" }, "the refund")

	_, r = s.buyWith(t, bia, "c", pspsim.CardMastercard, s.seats[8:10]...)
	require.Equal(t, "paid", r.Body["status"], "2 more make 6 of 6")
	caio := newFan(t, s.srv)
	caio.signUp("caio@example.com")
	_, r = s.buyWith(t, caio, "d", pspsim.CardMastercard, s.seats[4:8]...)
	require.Equal(t, "paid", r.Body["status"], "an account on another device, on the seats the refused order gave back at once")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestLinkedAccountsRaceForTheClusterLimit: a farm of accounts on one
// device pays at once, each with its own card; the cluster's limit lock
// lets exactly as many tickets through as one fan may buy.
func TestLinkedAccountsRaceForTheClusterLimit(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	const farm = 8
	type bot struct {
		f     *fan
		order int64
		pay   string
	}
	bots := make([]bot, farm)
	device := ""
	for i := range bots {
		b := &bots[i]
		b.f = newFan(t, s.srv)
		if device != "" {
			b.f.onDevice(device)
		}
		b.f.signUp(fmt.Sprintf("bot%d@example.com", i))
		device = b.f.device()
		_, b.order = s.hold(t, b.f, "h", s.seats[2*i:2*i+2]...)
		b.pay = s.checkout(t, b.f, b.order).ID
	}
	var wg sync.WaitGroup
	for i, b := range bots {
		wg.Go(func() {
			card := pspsim.CardVisa
			if i%2 == 1 {
				card = pspsim.CardMastercard
			}
			_, err := s.sim.Pay(b.pay, card)
			require.NoError(t, err)
		})
	}
	wg.Wait()
	paid := 0
	for _, b := range bots {
		if r := s.settled(t, b.f, b.order); r.Body["status"] == "paid" {
			paid += 2
		}
	}
	require.Equal(t, 6, paid, "tickets the farm's cluster paid for")
	waitUntil(t, 15*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM orders WHERE status = 'refunded'`) == farm-3
	}, "the refunds of the charges past the cluster's limit")
	s.requireMoneyConserved(t)
}

// velocity turns the velocity rule down to 2 purchases an hour.
func velocity(c *config.Config) { c.VelocityWindow, c.VelocityMax = time.Hour, 2 }

// TestVelocityPausesHolds: an account that bought more often than the
// threshold within the window, across events, is refused its next hold
// with a clear problem; the hook the waiting room's join calls says so.
func TestVelocityPausesHolds(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, velocity)
	f := newFan(t, s.srv)
	id := f.signUp("fast@example.com")
	for i := range 3 {
		_, r := s.buyWith(t, f, fmt.Sprintf("v%d", i), pspsim.CardVisa, s.seats[i])
		require.Equal(t, "paid", r.Body["status"])
	}
	waitUntil(t, 10*time.Second, func() bool {
		_, flagged, err := s.app.Fairness.Velocity(context.Background(), id, f.device())
		return err == nil && flagged
	}, "the velocity flag")
	r := f.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", map[string]any{"seats": []int64{s.seats[9]}}, "Idempotency-Key", "v-next")
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Raw))
	require.Equal(t, "https://catraca.dev/problems/purchase-velocity", r.Body["type"])
	require.Contains(t, r.Body["detail"], "more often than a fan does within 1h0m0s")

	// The organizer's console lists the account among those flagged.
	org := s.organizerOf(t)
	waitUntil(t, 10*time.Second, func() bool {
		r := org.do(http.MethodGet, "/api/organizer/linked-accounts", nil)
		flagged, _ := r.Body["flagged"].([]any)
		return len(flagged) == 1 && flagged[0].(map[string]any)["id"] == float64(id)
	}, "the flagged account in the console")

	other := newFan(t, s.srv)
	other.signUp("slow@example.com")
	s.hold(t, other, "slow", s.seats[10])
}

// TestOrganizerSeesLinkedAccountsAndActs: accounts linked after they
// bought (a log-in from the other's device) are listed over the limit
// with the shared device as evidence; the organizer voids one order
// (refunded through the provider), blocks the account (no hold, no
// log-in: a clear problem), unblocks it on appeal; every action is in the
// audit log with who did it. A fan may not see the page.
func TestOrganizerSeesLinkedAccountsAndActs(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia := newFan(t, s.srv)
	biaID := bia.signUp("bia@example.com")
	_, r := s.buyWith(t, ana, "a", pspsim.CardVisa, s.seats[0:4]...)
	require.Equal(t, "paid", r.Body["status"])
	biaOrder, r := s.buyWith(t, bia, "b", pspsim.CardVisa, s.seats[4:8]...)
	require.Equal(t, "paid", r.Body["status"], "not linked yet")

	bia.onDevice(ana.device())
	r = bia.do(http.MethodPost, "/api/session", map[string]any{"email": "bia@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status)

	org := s.organizerOf(t)
	r = org.do(http.MethodGet, "/api/organizer/linked-accounts", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	clusters := r.Body["clusters"].([]any)
	require.Len(t, clusters, 1)
	c := clusters[0].(map[string]any)
	require.Equal(t, true, c["over_limit"], "8 of 6")
	require.Len(t, c["members"], 2)
	ev := c["events"].([]any)[0].(map[string]any)
	require.Equal(t, float64(8), ev["tickets"])
	require.Equal(t, float64(6), ev["limit"])
	devices := c["evidence"].(map[string]any)["devices"].([]any)
	require.Len(t, devices, 1, "the shared device is the evidence")
	require.Equal(t, ana.device()[:8]+"…", devices[0].(map[string]any)["value"])

	r = org.do(http.MethodPost, "/api/organizer/linked-orders/"+itoa(biaOrder)+"/void", map[string]any{"reason": "8 tickets across 2 accounts on one phone"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	waitUntil(t, 15*time.Second, func() bool { return s.orderStatus(t, bia, biaOrder).Body["status"] == "refunded" }, "the void's refund")

	r = org.do(http.MethodPost, "/api/organizer/linked-accounts/"+itoa(biaID)+"/block", map[string]any{"reason": ""})
	require.Equal(t, http.StatusBadRequest, r.Status, "a reason is required")
	r = org.do(http.MethodPost, "/api/organizer/linked-accounts/"+itoa(biaID)+"/block", map[string]any{"reason": "farm account"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))

	r = bia.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", map[string]any{"seats": []int64{s.seats[20]}}, "Idempotency-Key", "blocked")
	require.Equal(t, http.StatusForbidden, r.Status, "a blocked account's session cannot hold")
	require.Equal(t, "https://catraca.dev/problems/account-blocked", r.Body["type"])
	require.Contains(t, r.Body["detail"], "they can unblock it")
	r = bia.do(http.MethodPost, "/api/session", map[string]any{"email": "bia@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusForbidden, r.Status, "nor log in")
	require.Equal(t, "https://catraca.dev/problems/account-blocked", r.Body["type"])

	r = org.do(http.MethodPost, "/api/organizer/linked-accounts/"+itoa(biaID)+"/unblock", map[string]any{"reason": "appeal: Ana's sister"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = bia.do(http.MethodPost, "/api/session", map[string]any{"email": "bia@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status, "unblocked")

	r = org.do(http.MethodGet, "/api/organizer/linked-accounts", nil)
	audit := r.Body["audit"].([]any)
	require.Len(t, audit, 3)
	var actions []string
	for _, e := range audit {
		e := e.(map[string]any)
		actions = append(actions, e["action"].(string)+": "+e["reason"].(string))
		require.NotZero(t, e["actor"])
		require.Equal(t, "org@example.com", e["actor_email"], "who did it")
	}
	require.Equal(t, []string{"unblock: appeal: Ana's sister", "block: farm account", "void: 8 tickets across 2 accounts on one phone"}, actions)
	require.Equal(t, float64(biaOrder), audit[2].(map[string]any)["order_id"])
	require.True(t, strings.Contains(string(r.Raw), `"devices"`), "the void's evidence is kept")

	r = ana.do(http.MethodGet, "/api/organizer/linked-accounts", nil)
	require.Equal(t, http.StatusForbidden, r.Status, "fans may not")
	s.requireMoneyConserved(t)
}
