package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/tools/pspsim"
)

// cardLimit turns on the per-card limit the test shops turn off.
func cardLimit(c *config.Config) { c.NoCardLimit = false }

// settled waits until an order has left pending and returns it.
func (s *shop) settled(t *testing.T, f *fan, orderID int64) response {
	t.Helper()
	var r response
	waitUntil(t, 15*time.Second, func() bool {
		r = s.orderStatus(t, f, orderID)
		return r.Body["status"] != "pending"
	}, "order %d to be paid or refused", orderID)
	return r
}

// TestOneCardBuysNoMoreThanOneFan: a card is limited per event as an
// account is, whichever accounts it pays for (the simulator's card
// fingerprints, like Stripe's, are the same for every account typing one
// number): the charge that would take a card past the limit is refunded,
// and the order says why, and its seats go back on sale at once. Another
// card pays as usual.
func TestOneCardBuysNoMoreThanOneFan(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, cardLimit)
	buy := func(email string, card string, seats ...int64) (*fan, int64, response) {
		f := newFan(t, s.srv)
		f.signUp(email)
		_, orderID := s.hold(t, f, "h-"+email, seats...)
		p := s.checkout(t, f, orderID)
		_, err := s.sim.Pay(p.ID, card)
		require.NoError(t, err)
		return f, orderID, s.settled(t, f, orderID)
	}
	_, _, ana := buy("ana@example.com", pspsim.CardVisa, s.seats[0:4]...)
	require.Equal(t, "paid", ana.Body["status"], "4 of 6 on the card")

	bia, biaOrder, r := buy("bia@example.com", pspsim.CardVisa, s.seats[4:8]...)
	require.Contains(t, []any{"refund_pending", "refunded"}, r.Body["status"], "4 more on the same card make 8 of 6")
	require.Equal(t, order.CardLimit, r.Body["payment"].(map[string]any)["failure"], "the order says why")
	waitUntil(t, 15*time.Second, func() bool { return s.orderStatus(t, bia, biaOrder).Body["status"] == "refunded" }, "the refund")
	r = s.orderStatus(t, bia, biaOrder)
	require.Equal(t, order.CardLimit, r.Body["payment"].(map[string]any)["failure"], "still, once refunded")

	_, _, caio := buy("caio@example.com", pspsim.CardVisa, s.seats[8:10]...)
	require.Equal(t, "paid", caio.Body["status"], "2 more make 6 of 6 on the card")
	// The refused order's seats went back on sale with its refusal, not
	// at its hold's expiry.
	_, _, dora := buy("dora@example.com", pspsim.CardMastercard, s.seats[4:8]...)
	require.Equal(t, "paid", dora.Body["status"], "another card, on the seats the refused order gave back")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// TestRefusedOrderSeatsShowFreeOnTheMap: the seats of a payment refused
// for a limit are pushed to live maps as available with the refusal.
func TestRefusedOrderSeatsShowFreeOnTheMap(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, cardLimit)
	// Four changes: each fan's hold, ana's sale and bia's refusal.
	got, subscribed := make(chan []string, 1), make(chan struct{})
	go func() {
		_, data := sse(t, s.srv, "/api/events/"+itoa(s.eventID)+"/stream", "", 4, subscribed)
		got <- data
	}()
	<-subscribed
	for i, email := range []string{"ana@example.com", "bia@example.com"} {
		f := newFan(t, s.srv)
		f.signUp(email)
		_, orderID := s.hold(t, f, email, s.seats[i*4:i*4+4]...)
		p := s.checkout(t, f, orderID)
		_, err := s.sim.Pay(p.ID, pspsim.CardVisa)
		require.NoError(t, err)
		s.settled(t, f, orderID)
	}
	data := <-got
	require.Len(t, data, 4)
	states := strings.Join(data, "\n")
	require.Contains(t, states, `"state":"sold"`, "ana's seats")
	require.Contains(t, states, `"state":"available"`, "bia's seats, given back with the refusal")
}

// TestPaymentsOnOneCardRaceForItsLimit: a farm of accounts pays with one
// card at once; the card's limit lock lets exactly as many tickets through
// as one fan may buy.
func TestPaymentsOnOneCardRaceForItsLimit(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, cardLimit)
	const farm = 8
	type bot struct {
		f     *fan
		order int64
		pay   string
	}
	bots := make([]bot, farm)
	for i := range bots {
		b := &bots[i]
		b.f = newFan(t, s.srv)
		b.f.signUp(fmt.Sprintf("bot%d@example.com", i))
		_, b.order = s.hold(t, b.f, "h", s.seats[2*i:2*i+2]...)
		b.pay = s.checkout(t, b.f, b.order).ID
	}
	var wg sync.WaitGroup
	for _, b := range bots {
		wg.Go(func() {
			_, err := s.sim.Pay(b.pay, pspsim.CardVisa)
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
	require.Equal(t, 6, paid, "tickets the farm's one card paid for")
	waitUntil(t, 15*time.Second, func() bool {
		return s.count(t, `SELECT count(*) FROM orders WHERE status = 'refunded'`) == farm-3
	}, "the refunds of the charges past the card's limit")
	s.requireMoneyConserved(t)
}

// TestCardRefusalLinksTheAccount: a charge refused because its card is
// over the card's limit still records the card for the paying account,
// which so joins the card's cluster (before, the refusal came before the
// link: the account stayed alone, and registered for and won a presale
// beside its card's group).
func TestCardRefusalLinksTheAccount(t *testing.T) {
	t.Parallel()
	s := newShopWith(t, pspsim.Faults{}, cardLimit)
	ana := newFan(t, s.srv)
	anaID := ana.signUp("ana@example.com")
	bia := newFan(t, s.srv)
	biaID := bia.signUp("bia@example.com")
	_, r := s.buyWith(t, ana, "a", pspsim.CardVisa, s.seats[0:4]...)
	require.Equal(t, "paid", r.Body["status"], "4 of 6 on the card")
	_, r = s.buyWith(t, bia, "b", pspsim.CardVisa, s.seats[4:8]...)
	require.Equal(t, order.CardLimit, r.Body["payment"].(map[string]any)["failure"], "4 more on the card make 8 of 6")

	cluster, members, err := s.app.Fairness.Cluster(context.Background(), biaID)
	require.NoError(t, err)
	require.ElementsMatch(t, []int64{anaID, biaID}, members, "the refused account shares the card's cluster")
	require.Equal(t, min(anaID, biaID), cluster)
}
