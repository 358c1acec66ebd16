package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/syncbuf"
	"github.com/catraca/catraca/tools/testenv"
)

// shop is a running app with a PSP simulator wired both ways.
type shop struct {
	app     *app.App
	srv     *httptest.Server
	sim     *pspsim.Sim
	secret  string
	seats   []int64
	eventID int64
	// failNext makes the webhook endpoint answer 500 (a crash before commit).
	failNext atomic.Int32
	logs     syncbuf.Buffer // the app's JSON log lines
	// errors5xx counts the app's 5xx answers (not failNext's).
	errors5xx atomic.Int32
	// stopWorkers stops the outbox, queue, reconciler and sweeper.
	stopWorkers func()
	// refundCalls counts the refunds asked of the PSP (replays included);
	// refundKeys lists their idempotency keys.
	refundCalls atomic.Int32
	keysMu      sync.Mutex
	refundKeys  []string
	// beforeRefundAnswer, when set, runs once a refund is made at the PSP
	// and before its answer reaches the shop (the PSP's webhooks about it
	// may come first).
	beforeRefundAnswer atomic.Pointer[func()]
}

// keys returns the idempotency keys of the refunds asked so far.
func (s *shop) keys() []string {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	return slices.Clone(s.refundKeys)
}

func newShop(t testing.TB, faults pspsim.Faults) *shop {
	t.Helper()
	return newShopWith(t, faults, nil)
}

// newShopWith is newShop with its configuration tuned.
func newShopWith(t testing.TB, faults pspsim.Faults, tune func(*config.Config)) *shop {
	t.Helper()
	s := &shop{}
	mailbox := t.TempDir()
	simSrv := httptest.NewUnstartedServer(nil)
	simSrv.Start()
	t.Cleanup(simSrv.Close)
	cfg := testenv.Config(t, testenv.NewDatabases(t, 2))
	cfg.PSPURL, cfg.Mailbox, cfg.PSPRate = simSrv.URL, mailbox, 50
	// These shops' fans all pay with Stripe's test card 4242, whose one
	// fingerprint would pass the per-card limit after a few orders: the
	// card tests (cards_test.go) turn it on.
	cfg.NoCardLimit = true
	if tune != nil {
		tune(&cfg)
	}
	s.secret = cfg.PSPWebhookSecrets[0]
	var err error
	s.app, err = app.Open(context.Background(), cfg, app.WithLogger(slog.New(slog.NewJSONHandler(&s.logs, nil))))
	require.NoError(t, err)
	t.Cleanup(s.app.Close)
	if faults.RetryBase == 0 {
		faults.RetryBase = 50 * time.Millisecond
	}
	s.sim = pspsim.New(pspsim.Config{APIKey: s.app.Config.PSPAPIKey, Secret: s.secret, PublicURL: simSrv.URL, Faults: faults})
	t.Cleanup(s.sim.Close)
	simSrv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/refunds" {
			s.refundCalls.Add(1)
			s.keysMu.Lock()
			s.refundKeys = append(s.refundKeys, r.Header.Get("Idempotency-Key"))
			s.keysMu.Unlock()
			if hook := s.beforeRefundAnswer.Load(); hook != nil {
				rec := httptest.NewRecorder()
				s.sim.ServeHTTP(rec, r)
				(*hook)()
				maps.Copy(w.Header(), rec.Header())
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
				return
			}
		}
		s.sim.ServeHTTP(w, r)
	})
	h := validated(t, s.app.Handler())
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/psp/webhook" && s.failNext.Load() > 0 {
			s.failNext.Add(-1)
			http.Error(w, "crashed before commit", http.StatusInternalServerError)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		if rec.status >= 500 {
			s.errors5xx.Add(1)
		}
	}))
	t.Cleanup(s.srv.Close)
	s.sim.SetWebhookURL(s.srv.URL + "/api/psp/webhook")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.app.RunWorkers(ctx)
	s.stopWorkers = cancel

	o := organizerFan(t, s.app, s.srv)
	venueID := importVenue(t, o, venue.Stadium("Pay Arena", "Manaus", 600, 50))
	s.eventID = createEvent(t, o, venueID, "Paid Show", false)
	s.seats = seatIDs(t, s.app, venueID)
	return s
}

// buyer signs a fan up and holds one seat for it.
func (s *shop) buyer(t testing.TB, email string) (*fan, int64) {
	t.Helper()
	f := newFan(t, s.srv)
	f.signUp(email)
	_, orderID := s.hold(t, f, "h-"+email, s.seats[0])
	return f, orderID
}

func (s *shop) hold(t testing.TB, f *fan, key string, seats ...int64) (holdID, orderID int64) {
	t.Helper()
	r := f.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", map[string]any{"seats": seats}, "Idempotency-Key", key)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	return int64(r.Body["hold_id"].(float64)), int64(r.Body["order_id"].(float64))
}

// paymentID waits until the order has a PSP payment and returns its id.
func (s *shop) payment(t testing.TB, orderID int64) psp.Payment {
	t.Helper()
	var found psp.Payment
	waitUntil(t, 15*time.Second, func() bool {
		for _, p := range s.sim.Payments() {
			if p.OrderID == orderID && (found.ID == "" || !p.Created.Before(found.Created)) { // listed in creation order
				found = p
			}
		}
		return found.ID != ""
	}, "a PSP payment for order %d", orderID)
	return found
}

func (s *shop) orderStatus(t testing.TB, f *fan, id int64) response {
	return f.do(http.MethodGet, "/api/orders/"+itoa(id), nil)
}

func (s *shop) count(t testing.TB, q string, args ...any) int {
	var total int
	for _, id := range s.app.Shards.IDs() {
		pool, _ := s.app.Shards.Pool(id)
		var n int
		require.NoError(t, pool.QueryRow(context.Background(), q, args...).Scan(&n))
		total += n
	}
	return total
}

func TestCheckoutPayAndTickets(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, bia := newFan(t, s.srv), newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	holdID, orderID := s.hold(t, ana, "h1", s.seats[:2]...)
	checkout := "/api/orders/" + itoa(orderID) + "/checkout"
	// The hold is two minutes old when payment starts (as time would make
	// it): checkout extends it to a full TTL from now, two minutes later.
	shardDB, err := s.app.Shards.ForRow(holdID)
	require.NoError(t, err)
	_, err = shardDB.Exec(context.Background(), `WITH h AS (
			UPDATE holds SET created_at = created_at - interval '2 minutes', expires_at = expires_at - interval '2 minutes' WHERE id = $1
		) UPDATE event_seats SET held_until = held_until - interval '2 minutes' WHERE hold_id = $1`, holdID)
	require.NoError(t, err)
	before := s.orderStatus(t, ana, orderID).Body["hold_expires_at"].(string)

	requireProblem(t, bia.do(http.MethodPost, checkout, nil), http.StatusNotFound, "order-not-found")
	requireProblem(t, bia.do(http.MethodGet, "/api/orders/"+itoa(orderID), nil), http.StatusNotFound, "order-not-found")

	// A double click: two checkouts at once make one PSP payment.
	var wg sync.WaitGroup
	var urls sync.Map
	for range 5 {
		wg.Go(func() {
			r := ana.do(http.MethodPost, checkout, nil)
			if r.Status == http.StatusOK {
				urls.Store(r.Body["payment_url"], true)
			}
		})
	}
	wg.Wait()
	p := s.payment(t, orderID)
	time.Sleep(300 * time.Millisecond)
	require.Equal(t, 1, s.sim.Stats().Payments, "one PSP payment for a double-clicked checkout")
	r := s.orderStatus(t, ana, orderID)
	require.Equal(t, "pending", r.Body["status"])
	after, err := time.Parse(time.RFC3339Nano, r.Body["hold_expires_at"].(string))
	require.NoError(t, err)
	was, err := time.Parse(time.RFC3339Nano, before)
	require.NoError(t, err)
	extended := after.Sub(was)
	require.InDelta(t, 2*time.Minute, extended, float64(10*time.Second), "checkout extended the hold by the two minutes it had aged")
	var seatsUntil time.Time
	require.NoError(t, shardDB.QueryRow(context.Background(), `SELECT max(held_until) FROM event_seats WHERE hold_id = $1`, holdID).Scan(&seatsUntil))
	require.True(t, seatsUntil.Equal(after), "the seats are held as long as the hold: %v, %v", seatsUntil, after)

	// A declined card: the order stays payable; the fan retries.
	_, err = s.sim.Pay(p.ID, pspsim.CardDeclined)
	require.NoError(t, err)
	waitUntil(t, 5*time.Second, func() bool {
		pay, _ := s.orderStatus(t, ana, orderID).Body["payment"].(map[string]any)
		return pay != nil && pay["status"] == "failed"
	}, "the failure")
	r = ana.do(http.MethodPost, checkout, nil)
	require.Less(t, r.Status, 300, string(r.Raw))
	waitUntil(t, 5*time.Second, func() bool { return s.sim.Stats().Payments == 2 }, "a second attempt")
	p = s.payment(t, orderID)
	_, err = s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 5*time.Second, func() bool { return s.orderStatus(t, ana, orderID).Body["status"] == "paid" }, "the order to be paid")

	r = s.orderStatus(t, ana, orderID)
	tickets := r.Body["tickets"].([]any)
	require.Len(t, tickets, 2)
	require.NotContains(t, tickets[0], "code", "codes rotate: only the ticket page shows them")
	// The issue-time code (a static bearer code) leaves no trace a fan or a
	// log sees: not in the order, not in a URL, not in the mail.
	pool, err := s.app.Shards.ForRow(orderID)
	require.NoError(t, err)
	var issued string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT code FROM tickets WHERE order_id = $1 LIMIT 1`, orderID).Scan(&issued))
	require.NotContains(t, string(r.Raw), issued)
	requireProblem(t, ana.do(http.MethodPost, checkout, nil), http.StatusConflict, "order-not-payable")
	mine := ana.do(http.MethodGet, "/api/me/orders", nil)
	require.Len(t, mine.Body["orders"], 1)
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM event_seats WHERE status = 'sold'`))
	waitUntil(t, 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(s.app.Config.Mailbox, fmt.Sprintf("order-%d.txt", orderID)))
		return err == nil
	}, "the confirmation email")
	mail, _ := os.ReadFile(filepath.Join(s.app.Config.Mailbox, fmt.Sprintf("order-%d.txt", orderID)))
	require.Contains(t, string(mail), "/tickets")
	require.NotContains(t, string(mail), "R1.", "no ticket code in the mail")
	require.NotContains(t, string(mail), issued)
}

func TestCheckoutQueuesWhenTheQuotaIsUnreadable(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, orderID := s.buyer(t, "ana@example.com")
	require.NoError(t, s.app.Redis.Close()) // this app's Redis is gone
	r := ana.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil)
	require.Equal(t, http.StatusAccepted, r.Status, "queued, not a 500: %s", r.Raw)
	require.Equal(t, true, r.Body["queued"])
	require.Equal(t, "pending", s.orderStatus(t, ana, orderID).Body["status"], "nothing lost")
}

func TestWebhookSignature(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	_, orderID := s.buyer(t, "sig@example.com")
	body := []byte(fmt.Sprintf(`{"id":"evt_forged","object":"event","api_version":%q,"created":%d,"type":"checkout.session.completed",
		"data":{"object":{"id":"cs_x","object":"checkout.session","amount_total":1,"currency":"brl","payment_status":"paid","status":"complete",
		"metadata":{%q:"%d",%q:"order-x"}}}}`, stripe.APIVersion, time.Now().Unix(), psp.MetaOrder, orderID, psp.MetaReference))
	post := func(sig string) response {
		req, _ := http.NewRequest(http.MethodPost, s.srv.URL+"/api/psp/webhook", bytes.NewReader(body))
		req.Header.Set("Stripe-Signature", sig)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		out := response{Status: res.StatusCode, Header: res.Header}
		json.NewDecoder(res.Body).Decode(&out.Body)
		return out
	}
	requireProblem(t, post(pspsim.Sign("whsec_not the secret at all, no sir", time.Now(), body)), http.StatusBadRequest, "bad-signature")
	requireProblem(t, post(pspsim.Sign(s.secret, time.Now().Add(-10*time.Minute), body)), http.StatusBadRequest, "bad-signature")
	requireProblem(t, post(""), http.StatusBadRequest, "bad-signature")
	require.Zero(t, s.count(t, `SELECT count(*) FROM webhook_events`), "nothing recorded")
	require.Zero(t, s.count(t, `SELECT count(*) FROM orders WHERE status <> 'pending'`), "nothing changed")
}

// TestWebhookStorm pays 250 orders (over a thousand deliveries) while the PSP duplicates every delivery
// three times, reorders them, fails a first delivery (a crash before
// commit) and drops another order's webhooks entirely (the reconciler
// repairs it).
func TestWebhookStorm(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{Duplicates: 3, Reorder: 300 * time.Millisecond})
	const orders = 250
	fans := make([]*fan, orders)
	ids := make([]int64, orders)
	for i := range fans {
		fans[i] = newFan(t, s.srv)
		fans[i].signUp(fmt.Sprintf("storm%d@example.com", i))
		_, ids[i] = s.hold(t, fans[i], "h", s.seats[i*2:i*2+2]...)
		r := fans[i].do(http.MethodPost, "/api/orders/"+itoa(ids[i])+"/checkout", nil)
		require.Less(t, r.Status, 300, string(r.Raw))
	}
	s.failNext.Store(5)
	for _, id := range ids[:orders-1] {
		_, err := s.sim.Pay(s.payment(t, id).ID, pspsim.CardSuccess)
		require.NoError(t, err)
	}
	// Each charge is confirmed with the PSP within the quota (40 calls a
	// second here) before it applies: several seconds on an idle machine,
	// minutes on a loaded one. Fail on a stall, not on slowness: 60 s
	// without one more order paid.
	paid, last, progress := 0, -1, time.Now()
	for paid < orders-1 {
		if paid = s.count(t, `SELECT count(*) FROM orders WHERE status = 'paid'`); paid != last {
			last, progress = paid, time.Now()
		}
		if time.Since(progress) > time.Minute {
			t.Fatalf("stalled at %d of %d delivered orders paid", paid, orders-1)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // let the duplicates land before the outage
	s.sim.SetFaults(pspsim.Faults{WebhookOutage: true, RetryBase: 50 * time.Millisecond, MaxAttempts: 2})
	_, err := s.sim.Pay(s.payment(t, ids[orders-1]).ID, pspsim.CardSuccess)
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, "pending", s.orderStatus(t, fans[orders-1], ids[orders-1]).Body["status"], "its webhooks were lost")
	_, err = s.app.Orders.Reconcile(context.Background(), time.Now().Add(-time.Hour))
	require.NoError(t, err)
	require.Equal(t, "paid", s.orderStatus(t, fans[orders-1], ids[orders-1]).Body["status"], "the reconciler repaired it")

	st := s.sim.Stats()
	for _, id := range ids {
		require.Equal(t, 1, st.Charges[id], "one successful charge for order %d", id)
		require.Zero(t, st.Refunds[id])
	}
	require.Equal(t, orders*2, s.count(t, `SELECT count(*) FROM tickets`), "tickets issued once")
	require.Equal(t, orders*2, s.count(t, `SELECT count(*) FROM event_seats WHERE status = 'sold'`))
	require.Equal(t, orders, s.count(t, `SELECT count(*) FROM outbox WHERE topic = 'order.paid'`))
	require.LessOrEqual(t, st.MaxOpsPerSecond, 50, "the PSP never saw more than its quota")
	t.Logf("deliveries accepted: %d, events: %d, rate-limited calls: %d", st.Delivered, st.Events, st.RateLimited)
}

// TestPaymentAfterHoldLostIsRefunded: the fan pays after the hold expired
// and the seat went to someone else: exactly one refund.
func TestPaymentAfterHoldLostIsRefunded(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{Duplicates: 2})
	ana, bia := newFan(t, s.srv), newFan(t, s.srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	_, orderID := s.hold(t, ana, "a", s.seats[0])
	r := ana.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil)
	require.Less(t, r.Status, 300)
	p := s.payment(t, orderID)
	// Time passes: the hold expires and Bia takes the seat.
	for _, id := range s.app.Shards.IDs() {
		pool, _ := s.app.Shards.Pool(id)
		pool.Exec(context.Background(), `UPDATE holds SET expires_at = now() - interval '1 second' WHERE status = 'active'`)
		pool.Exec(context.Background(), `UPDATE event_seats SET held_until = now() - interval '1 second' WHERE status = 'held'`)
	}
	s.hold(t, bia, "b", s.seats[0])
	_, err := s.sim.Pay(p.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 10*time.Second, func() bool {
		pay, _ := s.orderStatus(t, ana, orderID).Body["payment"].(map[string]any)
		return pay != nil && pay["status"] == "refunded"
	}, "the refund")
	r = s.orderStatus(t, ana, orderID)
	require.Equal(t, "refunded", r.Body["status"])
	require.Empty(t, r.Body["tickets"])
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, 1, s.sim.Stats().Refunds[orderID], "exactly one refund")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM event_seats WHERE status = 'held'`), "Bia keeps the seat")
}

// Checkout of an expired hold answered 410 hold-expired until the sweeper
// ran, then 409 "it is expired": one answer either way.
func TestCheckoutOfAnExpiredHoldIsGoneBeforeAndAfterTheSweep(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, orderID := s.buyer(t, "ana@example.com")
	pool, err := s.app.Shards.ForRow(orderID)
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), `UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = (SELECT hold_id FROM orders WHERE id = $1)`, orderID)
	require.NoError(t, err)
	checkout := "/api/orders/" + itoa(orderID) + "/checkout"
	requireProblem(t, ana.do(http.MethodPost, checkout, nil), http.StatusGone, "hold-expired")
	_, err = s.app.Inventory.SweepAll(context.Background(), 100)
	require.NoError(t, err)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM orders WHERE status = 'expired'`), "swept")
	requireProblem(t, ana.do(http.MethodPost, checkout, nil), http.StatusGone, "hold-expired")
}
