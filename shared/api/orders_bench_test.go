package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/loadstat"
	"github.com/catraca/catraca/tools/pspsim"
)

// BenchmarkWebhooks posts signed checkout.session.completed events for 300 held
// orders, each delivered twice (the PSP's duplicates), through the HTTP
// handler: every first delivery sells a hold and issues tickets, every
// second one is recognised and acknowledged.
func BenchmarkWebhooks(b *testing.B) {
	const orders = 300
	for range b.N {
		s := newShop(b, pspsim.Faults{WebhookOutage: true})
		ctx := context.Background()
		e, err := s.app.Events.Get(ctx, s.eventID)
		if err != nil {
			b.Fatal(err)
		}
		bodies := make([][]byte, 0, orders*2)
		for i := range orders {
			h, _, err := s.app.Inventory.Hold(ctx, e, inventory.Request{Account: int64(1000 + i), Key: "w", Seats: s.seats[i : i+1]})
			if err != nil {
				b.Fatal(err)
			}
			// The payment row checkout creates: a charge must match one.
			ref := fmt.Sprintf("order-%d-1", h.OrderID)
			pool, err := s.app.Shards.ForRow(h.OrderID)
			if err == nil {
				_, err = pool.Exec(ctx, `INSERT INTO payments (order_id, idempotency_key, status, amount_cents, currency)
					VALUES ($1, $2, 'requires_action', $3, 'BRL')`, h.OrderID, ref, h.TotalCents)
			}
			if err != nil {
				b.Fatal(err)
			}
			// A session paid at the simulator (its own deliveries are off):
			// each delivery is confirmed against it.
			paid := s.sim.Charge(psp.CreatePayment{Amount: h.TotalCents, Currency: "BRL", OrderID: h.OrderID, Reference: ref})
			body := s.sim.EventBody("checkout.session.completed", paid.ID)
			bodies = append(bodies, body, body)
		}
		apptest.OpenShardConns(b, s.app)
		r := loadstat.Run(16, len(bodies), func(seq int) error {
			req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/api/psp/webhook", bytes.NewReader(bodies[seq]))
			req.Header.Set("Stripe-Signature", pspsim.Sign(s.secret, time.Now(), bodies[seq]))
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			res.Body.Close()
			if res.StatusCode != http.StatusNoContent {
				return fmt.Errorf("status %d", res.StatusCode)
			}
			return nil
		})
		loadstat.Report(b, r, "deliveries")
		if n := s.count(b, `SELECT count(*) FROM orders WHERE status = 'paid'`); n != orders {
			b.Fatalf("%d of %d orders paid", n, orders)
		}
	}
}

// BenchmarkCheckoutCapped starts 200 checkouts at once against a PSP that
// allows 50 operations per second; the report shows the checkouts per
// second the cap allows and the most operations the PSP saw in any second.
func BenchmarkCheckoutCapped(b *testing.B) {
	const orders = 200
	for range b.N {
		s := newShop(b, pspsim.Faults{RatePerSecond: 50})
		ctx := context.Background()
		e, err := s.app.Events.Get(ctx, s.eventID)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]int64, orders)
		accounts := make([]int64, orders)
		for i := range orders {
			accounts[i] = int64(2000 + i)
			h, _, err := s.app.Inventory.Hold(ctx, e, inventory.Request{Account: accounts[i], Key: "c", Seats: s.seats[i : i+1]})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = h.OrderID
		}
		start := time.Now()
		loadstat.Run(32, orders, func(seq int) error {
			_, _, err := s.app.Orders.Checkout(ctx, e, ids[seq], accounts[seq], "")
			return err
		})
		for s.sim.Stats().Payments < orders {
			if time.Since(start) > time.Minute {
				b.Fatal("checkouts did not complete")
			}
			time.Sleep(20 * time.Millisecond)
		}
		elapsed := time.Since(start)
		st := s.sim.Stats()
		b.ReportMetric(float64(orders)/elapsed.Seconds(), "checkouts/s")
		b.ReportMetric(float64(st.MaxOpsPerSecond), "max-psp-ops/s")
		b.ReportMetric(float64(st.RateLimited), "psp-429s")
	}
}
