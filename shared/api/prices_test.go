package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/tools/pspsim"
)

// Tests of price changes meeting places that are held at the time: a place
// is charged its level's price in force when it is taken (issue 29).

// setPrice has the organizer set one price level of the shop's event.
func (s *shop) setPrice(t testing.TB, o *fan, level string, cents int) {
	t.Helper()
	r := o.do(http.MethodPut, "/api/events/"+itoa(s.eventID)+"/price-levels", []map[string]any{{"code": level, "price_cents": cents}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
}

// heldItem holds what body asks for with key and returns the hold, its
// order and its single item's price level and price.
func (s *shop) heldItem(t testing.TB, f *fan, key string, body map[string]any) (holdID, orderID int64, level string, cents int) {
	t.Helper()
	r := f.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", body, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	items := r.Body["items"].([]any)
	require.Len(t, items, 1)
	it := items[0].(map[string]any)
	return int64(r.Body["hold_id"].(float64)), int64(r.Body["order_id"].(float64)), it["price_level"].(string), int(it["price_cents"].(float64))
}

// TestSeatsHeldDuringAPriceChangeTakeTheNewPrice: a seat held while its
// level's price changes keeps the old price in that hold's order, but once
// the hold is released or has expired the next fan is charged the new
// price, as the seat map and the event show. The price change skipped held
// seats, which came back at the old price for good.
func TestSeatsHeldDuringAPriceChangeTakeTheNewPrice(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	ana, bia := newFan(t, s.srv), newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	released, expired := s.seats[0], s.seats[1]

	holdID, _, level, old := s.heldItem(t, ana, "a1", map[string]any{"seats": []int64{released}})
	_, expiring, _, _ := s.heldItem(t, ana, "a2", map[string]any{"seats": []int64{expired}})
	for i, price := range []int{old + 2500, old - 2500} { // a rise, then a fall
		s.setPrice(t, o, level, price)
		r := ana.do(http.MethodDelete, "/api/holds/"+itoa(holdID), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		var l string
		var cents int
		holdID, _, l, cents = s.heldItem(t, bia, "b"+itoa(int64(i)), map[string]any{"seats": []int64{released}})
		require.Equal(t, level, l)
		require.Equal(t, price, cents, "a seat released after the price became %d is charged %d", price, cents)
		ana, bia = bia, ana
	}

	// An expired hold, not yet swept: the seat is free and takes the price.
	s.exec(t, expiring, `UPDATE event_seats SET held_until = now() - interval '1 second'
		WHERE hold_id = (SELECT hold_id FROM orders WHERE id = $1)`)
	_, _, _, cents := s.heldItem(t, bia, "b-expired", map[string]any{"seats": []int64{expired}})
	require.Equal(t, old-2500, cents, "a seat whose hold expired after the price change")
}

// TestLateChargesAtAnOldPriceAreRefunded: a payment page opened before a
// price change and paid after its hold was released re-takes the places
// only at the price in force: a GA place or a seat whose level's price has
// changed since its hold is refunded, like any other re-take that fails a
// rule. It was sold at the old price.
func TestLateChargesAtAnOldPriceAreRefunded(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	// The outbox stops: releases cannot cancel the payments at the PSP in
	// time, and the pages take the cards (as with a slow bank).
	s.stopWorkers()
	type late struct {
		f      *fan
		hold   int64
		order  int64
		level  string
		cents  int
		change int
	}
	var all []late
	for i, body := range []map[string]any{{"pool": "FLOOR", "quantity": 1}, {"seats": []int64{s.seats[0]}}} {
		f := newFan(t, s.srv)
		f.signUp("fan" + itoa(int64(i)) + "@example.com")
		hold, order, level, cents := s.heldItem(t, f, "k", body)
		all = append(all, late{f, hold, order, level, cents, []int{+1000, -1000}[i]})
	}
	for _, l := range all {
		p := s.checkout(t, l.f, l.order)
		s.setPrice(t, o, l.level, l.cents+l.change)
		r := l.f.do(http.MethodDelete, "/api/holds/"+itoa(l.hold), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
		require.NoError(t, err)
		waitUntil(t, 10*time.Second, func() bool {
			st := s.orderStatus(t, l.f, l.order).Body["status"]
			return st != "pending" && st != "cancelled" // the released hold's order, until the charge lands
		}, "the charge to be applied")
		// refund_pending until the PSP confirms the refund (below).
		require.Contains(t, []any{"refund_pending", "refunded"}, s.orderStatus(t, l.f, l.order).Body["status"],
			"%s charged %d after its price became %d", l.level, l.cents, l.cents+l.change)
		require.Contains(t, s.logLines(`"order":`+itoa(l.order)), "price", "the refusal says why")
	}

	_, err := s.app.Orders.Fulfil(context.Background()) // the outbox runs again
	require.NoError(t, err)
	require.Equal(t, float64(len(all)), s.metric(metrics.ChargesRefunded))
	waitUntil(t, 15*time.Second, func() bool { return s.count(t, `SELECT count(*) FROM orders WHERE status = 'refunded'`) == len(all) }, "refunds")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}
