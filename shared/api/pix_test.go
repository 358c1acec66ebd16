package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

// Pix: a BRL page offers it; the fan chooses it and leaves, and the bank
// confirms minutes later. The hold waits for the code, exactly until it
// expires; a Pix paid after the hold is gone re-takes its places or is
// refunded.

// choosePix checks out an order, chooses Pix on its page and waits until
// the shop knows a Pix is in progress; it returns the payment with its
// code's expiry.
func (s *shop) choosePix(t testing.TB, f *fan, orderID int64) psp.Payment {
	t.Helper()
	p := s.checkout(t, f, orderID)
	view, err := s.sim.ChoosePix(p.ID)
	require.NoError(t, err, "a BRL page offers Pix")
	waitUntil(t, 10*time.Second, func() bool { return s.paymentStatus(t, f, orderID) == "processing" }, "the Pix to be in progress")
	return view
}

// paymentStatus is the status of an order's payment as its fan sees it.
func (s *shop) paymentStatus(t testing.TB, f *fan, orderID int64) string {
	p, _ := s.orderStatus(t, f, orderID).Body["payment"].(map[string]any)
	status, _ := p["status"].(string)
	return status
}

// holdExpiry is an order's hold's expiry as its fan sees it.
func (s *shop) holdExpiry(t testing.TB, f *fan, orderID int64) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s.orderStatus(t, f, orderID).Body["hold_expires_at"].(string))
	require.NoError(t, err)
	return at
}

// age moves an order's hold d into the past (its creation and expiry), as
// if d had passed, and sweeps expired holds.
func (s *shop) age(t testing.TB, orderID int64, d time.Duration) {
	t.Helper()
	pool, err := s.app.Shards.ForRow(orderID)
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), `UPDATE holds SET expires_at = expires_at - make_interval(secs => $2),
		created_at = created_at - make_interval(secs => $2) WHERE id = (SELECT hold_id FROM orders WHERE id = $1)`, orderID, d.Seconds())
	require.NoError(t, err)
	_, err = s.app.Inventory.SweepAll(context.Background(), 100)
	require.NoError(t, err)
}

// TestPixPaysAfterTheFanLeftThePage: the page offers card and Pix with a
// code that lives what the hold can wait after the page closes; once the
// fan chose Pix the hold waits exactly until the code expires, the fan's
// order says a Pix is in progress, and the bank's payment pays the order.
func TestPixPaysAfterTheFanLeftThePage(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, orderID := s.buyer(t, "ana-pix@example.com")
	before := s.holdExpiry(t, ana, orderID)
	p := s.choosePix(t, ana, orderID)
	require.False(t, p.ExpiresAt.IsZero())
	require.True(t, s.holdExpiry(t, ana, orderID).Equal(p.ExpiresAt), "the hold waits until the code expires: %v, code %v",
		s.holdExpiry(t, ana, orderID), p.ExpiresAt)
	require.Equal(t, "pending", s.orderStatus(t, ana, orderID).Body["status"])
	require.NotEqual(t, before, p.ExpiresAt)

	_, err := s.sim.PayPix(p.ID)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, orderID).Body["status"] == "paid" }, "the Pix to pay the order")
	o := s.orderStatus(t, ana, orderID).Body
	require.Len(t, o["tickets"], 1)
	require.Equal(t, "succeeded", o["payment"].(map[string]any)["status"])
	require.Equal(t, "converted", o["hold_status"])
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestPixCodeExpiryEndsTheHold: the hold waiting for a Pix is not released
// before the code expires (the sweeper leaves it), and is released once it
// has; the code's expiry fails the payment and counts no decline (no card
// was refused), so the fan checks out again at once.
func TestPixCodeExpiryEndsTheHold(t *testing.T) {
	t.Parallel()
	s := declineShop(t) // two declines would slow checkout
	ana, orderID := s.buyer(t, "ana-pix-expiry@example.com")
	p := s.choosePix(t, ana, orderID)
	expiry := s.holdExpiry(t, ana, orderID)
	require.True(t, expiry.Equal(p.ExpiresAt), "hold %v, code %v", expiry, p.ExpiresAt)

	// 30 s before the code expires, past the hold's own TTL: still held.
	s.age(t, orderID, time.Until(expiry)-30*time.Second)
	o := s.orderStatus(t, ana, orderID).Body
	require.Equal(t, "pending", o["status"], "not released before the code expires")
	require.Equal(t, "active", o["hold_status"])
	// A second after it expired: released.
	s.age(t, orderID, 31*time.Second)
	o = s.orderStatus(t, ana, orderID).Body
	require.Equal(t, "expired", o["status"], "released once the code expired")
	require.Equal(t, "expired", o["hold_status"])
	require.Equal(t, "processing", o["payment"].(map[string]any)["status"], "a Pix in progress is left to its webhook")

	_, err := s.sim.ExpirePix(p.ID) // the PSP's clock reaches the code's expiry
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.paymentStatus(t, ana, orderID) == "failed" }, "the expired Pix to fail")
	waitUntil(t, 10*time.Second, func() bool {
		return s.count(t, `SELECT count(*)::int FROM webhook_events WHERE type IN ('payment_intent.payment_failed', 'checkout.session.async_payment_failed')`) == 2
	}, "both failure events applied")

	_, again := s.hold(t, ana, "again", s.seats[1])
	r := ana.do(http.MethodPost, "/api/orders/"+itoa(again)+"/checkout", nil)
	require.Less(t, r.Status, 300, "an expired Pix is no decline: %s", r.Raw)
	require.Empty(t, s.sim.Ledger())
	require.Zero(t, s.errors5xx.Load())
}

// TestPixPaidAfterTheHoldEnded: a Pix the bank pays after its hold ended
// (released by the fan while the code was still valid) follows the
// late-payment rule: its places are taken again if they are still free,
// else the money goes back.
func TestPixPaidAfterTheHoldEnded(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	release := func(f *fan, orderID int64) {
		holdID := int64(s.orderStatus(t, f, orderID).Body["hold_id"].(float64))
		r := f.do(http.MethodDelete, "/api/holds/"+itoa(holdID), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}
	ana, anaOrder := s.buyer(t, "ana-late-pix@example.com")
	anaPix := s.choosePix(t, ana, anaOrder)
	release(ana, anaOrder)

	bia := newFan(t, s.srv)
	bia.signUp("bia-late-pix@example.com")
	_, biaOrder := s.hold(t, bia, "b", s.seats[1])
	biaPix := s.choosePix(t, bia, biaOrder)
	release(bia, biaOrder)
	carl := newFan(t, s.srv)
	carl.signUp("carl-late-pix@example.com")
	s.hold(t, carl, "c", s.seats[1]) // Bia's seat goes to Carl

	for _, p := range []psp.Payment{anaPix, biaPix} {
		_, err := s.sim.PayPix(p.ID)
		require.NoError(t, err, "the code outlives the released hold")
	}
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, anaOrder).Body["status"] == "paid" }, "Ana's places re-taken")
	require.Len(t, s.orderStatus(t, ana, anaOrder).Body["tickets"], 1)
	waitUntil(t, 15*time.Second, func() bool {
		s.app.Orders.Fulfil(context.Background())
		return s.orderStatus(t, bia, biaOrder).Body["status"] == "refunded"
	}, "Bia's Pix refunded: her seat was taken")
	require.True(t, s.givenBack(biaPix.ID))
	require.False(t, s.givenBack(anaPix.ID))
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// simEvents reads the PSP's events, oldest first, as Stripe would deliver
// them (webhooks off).
func (s *shop) simEvents(t testing.TB) []json.RawMessage {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.app.Config.PSPURL+"/v1/events?limit=100", nil)
	req.Header.Set("Authorization", "Bearer "+s.app.Config.PSPAPIKey)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var list struct{ Data []json.RawMessage }
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	slices.Reverse(list.Data)
	return list.Data
}

// deliver posts one signed event to the shop's webhook.
func (s *shop) deliver(t testing.TB, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/api/psp/webhook", bytes.NewReader(body))
	req.Header.Set("Stripe-Signature", pspsim.Sign(s.secret, time.Now(), body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Less(t, res.StatusCode, 300)
}

// TestPixEventsOutOfOrderAndTwice: a paid Pix's events delivered newest
// first, then all again, pay the order once; the late "in progress" event
// neither moves the payment back nor touches the sold hold. An expired
// Pix's failure before its "in progress" leaves the payment failed.
func TestPixEventsOutOfOrderAndTwice(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{WebhookOutage: true})
	ana, anaOrder := s.buyer(t, "ana-pix-order@example.com")
	p := s.checkout(t, ana, anaOrder)
	_, err := s.sim.ChoosePix(p.ID)
	require.NoError(t, err)
	_, err = s.sim.PayPix(p.ID)
	require.NoError(t, err)
	bia := newFan(t, s.srv)
	bia.signUp("bia-pix-order@example.com")
	_, biaOrder := s.hold(t, bia, "b", s.seats[1])
	q := s.checkout(t, bia, biaOrder)
	biaExpiry := s.holdExpiry(t, bia, biaOrder)
	_, err = s.sim.ChoosePix(q.ID)
	require.NoError(t, err)
	_, err = s.sim.ExpirePix(q.ID)
	require.NoError(t, err)

	events := s.simEvents(t)
	require.Len(t, events, 6)
	for _, e := range slices.Backward(events) {
		s.deliver(t, e)
	}
	for _, e := range events {
		s.deliver(t, e)
	}
	o := s.orderStatus(t, ana, anaOrder).Body
	require.Equal(t, "paid", o["status"])
	require.Equal(t, "converted", o["hold_status"])
	require.Equal(t, "succeeded", o["payment"].(map[string]any)["status"])
	require.Len(t, o["tickets"], 1)
	require.Equal(t, "failed", s.paymentStatus(t, bia, biaOrder))
	require.True(t, s.holdExpiry(t, bia, biaOrder).Equal(biaExpiry), "a failed Pix's late progress does not hold the seats")
	require.Equal(t, 5, s.count(t, `SELECT count(*)::int FROM webhook_events`), "each applied once (payment_intent.succeeded is its session's)")
	require.Zero(t, s.sim.Stats().Refunds[anaOrder])
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestPixCanBeTurnedOff: with CATRACA_PSP_PIX=false (a Stripe account
// without Pix, which would refuse the session) BRL pages take cards only.
func TestPixCanBeTurnedOff(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, func(c *config.Config) { c.PSPNoPix = true })
	ana, orderID := s.buyer(t, "ana-no-pix@example.com")
	p := s.checkout(t, ana, orderID)
	_, err := s.sim.ChoosePix(p.ID)
	require.ErrorIs(t, err, pspsim.ErrNoPix)
	_, err = s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool { return s.orderStatus(t, ana, orderID).Body["status"] == "paid" }, "a card pays")
}
