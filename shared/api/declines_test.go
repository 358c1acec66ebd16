package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

// declineShop is a shop whose account thresholds are 2 (slow) and 4
// (block) declines, its address's 5 and 50.
func declineShop(t *testing.T) *shop {
	return newShopWith(t, pspsim.Faults{}, func(c *config.Config) {
		c.AccountSlowAfter, c.AccountBlockAfter = 2, 4
		c.AddressSlowAfter, c.AddressBlockAfter = 5, 50
		c.DeclineWindow, c.DeclineSlowDelay, c.DeclineBlockFor = 15*time.Minute, 30*time.Second, time.Hour
	})
}

// decline has the PSP decline a card on a payment page, and waits until
// the shop applied it.
func (s *shop) decline(t *testing.T, p psp.Payment) {
	t.Helper()
	before := s.count(t, `SELECT count(*) FROM webhook_events WHERE type = $1`, stripe.EventTypePaymentIntentPaymentFailed)
	_, err := s.sim.Pay(p.ID, pspsim.CardDeclined)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM webhook_events WHERE type = $1`, stripe.EventTypePaymentIntentPaymentFailed) > before
	}, "the decline to be applied")
}

// requireDeclines checks a checkout refused for declines: 429, why, and
// when to come back.
func requireDeclines(t *testing.T, r response, subject string, blocked bool, wait time.Duration) {
	t.Helper()
	requireProblem(t, r, http.StatusTooManyRequests, "too-many-declines")
	require.Equal(t, subject, r.Body["subject"])
	require.Equal(t, blocked, r.Body["blocked"])
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	// The wait counts from the decline, a moment before; rounded up.
	require.InDelta(t, wait.Seconds(), retry, 10, "Retry-After")
	require.Contains(t, r.Body["detail"], "declined")
}

// TestDeclinesSlowThenBlockCheckout (card testing): an account whose
// cards the PSP keeps declining is slowed (the 2nd decline), then blocked
// (the 4th), told why and when to retry; a fan on the same address under
// the address's threshold pays as usual, until the address's declines
// pass its own threshold.
func TestDeclinesSlowThenBlockCheckout(t *testing.T) {
	t.Parallel()
	s := declineShop(t)
	tester := newFan(t, s.srv)
	tester.signUp("tester@example.com")
	_, order := s.hold(t, tester, "h", s.seats[0])
	page := s.checkout(t, tester, order)
	checkout := func(f *fan, id int64) response {
		return f.do(http.MethodPost, "/api/orders/"+itoa(id)+"/checkout", nil)
	}

	s.decline(t, page)
	require.Less(t, checkout(tester, order).Status, 300, "one decline: a fan mistyping a card retries")
	page = s.payment(t, order)
	s.decline(t, page)
	requireDeclines(t, checkout(tester, order), "account", false, 30*time.Second)
	s.decline(t, page)
	s.decline(t, page)
	requireDeclines(t, checkout(tester, order), "account", true, time.Hour)

	// Another fan on the same address (4 declines, under its 5) pays.
	ana, anaOrder, _ := s.paidOrder(t, "ana-declines@example.com", s.seats[1])
	require.Equal(t, "paid", s.orderStatus(t, ana, anaOrder).Body["status"])
	// The 5th decline from the address (another fan's card: the blocked
	// account's page is expired) slows every checkout from it.
	cai := newFan(t, s.srv)
	cai.signUp("cai-declines@example.com")
	_, caiOrder := s.hold(t, cai, "h", s.seats[3])
	s.decline(t, s.checkout(t, cai, caiOrder))
	bia := newFan(t, s.srv)
	bia.signUp("bia-declines@example.com")
	_, biaOrder := s.hold(t, bia, "h", s.seats[2])
	requireDeclines(t, checkout(bia, biaOrder), "address", false, 30*time.Second)
	require.Zero(t, s.errors5xx.Load())
}

// TestBlockExpiresOpenPaymentPages (card testing): when an account gets
// blocked, its payment pages already open stop taking cards (their
// Checkout Sessions are expired), not only its next checkouts: the card
// tester's next card is refused, not charged.
func TestBlockExpiresOpenPaymentPages(t *testing.T) {
	t.Parallel()
	s := declineShop(t)
	tester := newFan(t, s.srv)
	tester.signUp("tester-pages@example.com")
	_, order := s.hold(t, tester, "h", s.seats[0])
	page := s.checkout(t, tester, order)
	for range 4 { // the 4th blocks the account
		s.decline(t, page)
	}
	waitUntil(t, 10*time.Second, func() bool { return s.simPayment(page.ID).Status == psp.StatusCanceled }, "the open page expired")
	view, err := s.sim.Pay(page.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	require.Equal(t, psp.StatusCanceled, view.Status, "an expired page takes no card")
	require.Equal(t, "pending", s.orderStatus(t, tester, order).Body["status"])
	require.Zero(t, s.count(t, `SELECT count(*) FROM payments WHERE order_id = $1 AND status NOT IN ('canceled')`, order))
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}
