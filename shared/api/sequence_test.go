package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/tools/pspsim"
)

// TestFeatureSequences walks random sequences across features — holds of
// seats and of best seats, releases, checkouts, payments, organizer
// refunds, the sale closed and reopened, ticket transfers, codes shown and
// scanned at the door (old ones too), holds running out, log-outs and
// log-ins — by fans who also touch each other's holds, orders and tickets.
// After every step: no 5xx (every answer is also checked against
// openapi.json), the door admitted only a paid ticket with its holder's
// code, and the shard is whole: no seat held by a hold that ended, no seat
// sold but to a paid or refunded order, no account over its ticket limit.
// At the end, what the PSP kept is what paid orders are worth.
func TestFeatureSequences(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	ev := "/api/events/" + itoa(s.eventID)
	door := s.doorStaff(t, "door@example.com")
	var fans, admitted, conflicts int
	codes := map[string]int64{} // every code a holder was shown: its holder's account
	rapid.Check(t, func(rt *rapid.T) {
		m := &sequence{t: t, s: s, org: org, door: door, ev: ev, codes: codes, admitted: &admitted, conflicts: &conflicts}
		m.answer(rt, "open the sale", org.do(http.MethodPut, ev+"/status", map[string]any{"status": "on_sale"}))
		for range 3 {
			fans++
			f := newFan(t, s.srv)
			email := fmt.Sprintf("seq%d@example.com", fans)
			m.ids = append(m.ids, f.signUp(email))
			m.fans, m.emails = append(m.fans, f), append(m.emails, email)
		}
		m.seats = s.seats[(fans/3)*12%(len(s.seats)-11):][:12]
		rt.Repeat(rapid.StateMachineActions(m))
	})
	// Settled: every charge's webhook applied, every refund it asked made.
	waitUntil(t, 20*time.Second, func() bool {
		charges := 0
		for _, e := range s.sim.Ledger() {
			if e.Amount > 0 {
				charges++
			}
		}
		return s.count(t, `SELECT count(*)::int FROM webhook_events WHERE type = $1`, "checkout.session.completed") == charges &&
			s.count(t, `SELECT count(*)::int FROM outbox WHERE processed_at IS NULL`) == 0
	}, "the payments to settle")
	s.requireMoneyConserved(t)
	t.Logf("over the sequences: %d paid orders (%d of standing places), %d refunded, %d tickets transferred, %d admitted at the door",
		s.count(t, `SELECT count(*)::int FROM orders WHERE status = 'paid'`),
		s.count(t, `SELECT count(*)::int FROM orders o WHERE status = 'paid' AND EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id AND i.pool_id IS NOT NULL)`),
		s.count(t, `SELECT count(*)::int FROM orders WHERE status = 'refunded'`),
		s.count(t, `SELECT count(*)::int FROM ticket_transfers`), admitted)
}

// logLines returns the app's log lines that name a request id: a 5xx's
// cause is logged, not answered.
func (s *shop) logLines(id string) string {
	var lines []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, id) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

type sequence struct {
	t     *testing.T
	s     *shop
	org   *fan
	door  *fan
	ev    string
	codes map[string]int64
	// admitted counts the door's admissions, conflicts the 503
	// concurrent-change answers, over all sequences.
	admitted, conflicts *int
	fans                []*fan
	ids                 []int64
	emails              []string
	seats               []int64
	holds               []int64
	orders              []int64
}

func (m *sequence) fan(rt *rapid.T) *fan {
	return m.fans[rapid.IntRange(0, len(m.fans)-1).Draw(rt, "fan")]
}

// maxConflicts is how many deadlocks a run of the sequences tolerates.
const maxConflicts = 2

// answer fails on a 5xx and remembers the holds and orders it names. A
// 503 concurrent-change (the database broke a deadlock with a background
// worker by undoing this request) is an answer the spec allows: it is
// logged, and the invariants after the step check what it left. More than
// maxConflicts of them in a run fail it: each is a lock-order defect to
// fix (one found this way was the checkout locking its order first).
func (m *sequence) answer(rt *rapid.T, what string, r response) {
	if r.Status == http.StatusServiceUnavailable && r.Body["type"] == "https://catraca.dev/problems/concurrent-change" && r.Header.Get("Retry-After") != "" {
		m.t.Logf("%s: %s\nserver log: %s", what, r.Raw, m.s.logLines(r.Header.Get("X-Request-Id")))
		if *m.conflicts++; *m.conflicts > maxConflicts {
			rt.Fatalf("%d deadlocks in one run: look for two paths that lock the same rows in different orders", *m.conflicts)
		}
		return
	}
	if r.Status >= 500 {
		rt.Fatalf("%s: %d %s\nserver log: %s", what, r.Status, r.Raw, m.s.logLines(r.Header.Get("X-Request-Id")))
	}
	for _, k := range []string{"hold_id", "order_id", "id"} {
		if v, ok := r.Body[k].(float64); ok && r.Status < 300 {
			list := &m.orders
			if k == "hold_id" {
				list = &m.holds
			}
			if !slices.Contains(*list, int64(v)) {
				*list = append(*list, int64(v))
			}
		}
	}
}

func (m *sequence) Hold(rt *rapid.T) {
	seats := rapid.SliceOfNDistinct(rapid.SampledFrom(m.seats), 1, 3, rapid.ID).Draw(rt, "seats")
	key := fmt.Sprintf("k%d", rapid.IntRange(0, 3).Draw(rt, "key"))
	m.answer(rt, "hold", m.fan(rt).do(http.MethodPost, m.ev+"/holds", map[string]any{"seats": seats}, "Idempotency-Key", key))
}

func (m *sequence) HoldBest(rt *rapid.T) {
	n := rapid.IntRange(1, 5).Draw(rt, "quantity")
	key := fmt.Sprintf("b%d", rapid.IntRange(0, 3).Draw(rt, "key"))
	m.answer(rt, "best", m.fan(rt).do(http.MethodPost, m.ev+"/holds", map[string]any{"best": map[string]any{"quantity": n}}, "Idempotency-Key", key))
}

// HoldPool holds standing places on the floor (general admission).
func (m *sequence) HoldPool(rt *rapid.T) {
	n := rapid.IntRange(1, 4).Draw(rt, "quantity")
	key := fmt.Sprintf("p%d", rapid.IntRange(0, 3).Draw(rt, "key"))
	m.answer(rt, "pool", m.fan(rt).do(http.MethodPost, m.ev+"/holds", map[string]any{"pool": "FLOOR", "quantity": n}, "Idempotency-Key", key))
}

func (m *sequence) Release(rt *rapid.T) {
	if len(m.holds) == 0 {
		rt.Skip("no hold")
	}
	id := rapid.SampledFrom(m.holds).Draw(rt, "hold")
	m.answer(rt, "release", m.fan(rt).do(http.MethodDelete, "/api/holds/"+itoa(id), nil))
}

func (m *sequence) Checkout(rt *rapid.T) {
	if len(m.orders) == 0 {
		rt.Skip("no order")
	}
	id := rapid.SampledFrom(m.orders).Draw(rt, "order")
	m.answer(rt, "checkout", m.fan(rt).do(http.MethodPost, "/api/orders/"+itoa(id)+"/checkout", nil))
}

func (m *sequence) Pay(rt *rapid.T) {
	var open []string
	for _, p := range m.s.sim.Payments() {
		if slices.Contains(m.orders, p.OrderID) && p.Status == psp.StatusRequiresPayment {
			open = append(open, p.ID)
		}
	}
	if len(open) == 0 {
		rt.Skip("no payment page open")
	}
	card := rapid.SampledFrom([]string{pspsim.CardSuccess, pspsim.CardSuccess, pspsim.CardDeclined}).Draw(rt, "card")
	m.s.sim.Pay(rapid.SampledFrom(open).Draw(rt, "payment"), card)
}

func (m *sequence) Refund(rt *rapid.T) {
	if len(m.orders) == 0 {
		rt.Skip("no order")
	}
	id := rapid.SampledFrom(m.orders).Draw(rt, "order")
	m.answer(rt, "refund", m.org.do(http.MethodPost, "/api/orders/"+itoa(id)+"/refund", nil))
}

func (m *sequence) Transfer(rt *rapid.T) {
	f := m.fan(rt)
	r := f.do(http.MethodGet, "/api/me/tickets", nil)
	m.answer(rt, "tickets", r)
	list, _ := r.Body["tickets"].([]any)
	if len(list) == 0 {
		rt.Skip("no ticket")
	}
	ticket := int64(rapid.SampledFrom(list).Draw(rt, "ticket").(map[string]any)["id"].(float64))
	to := rapid.SampledFrom(m.emails).Draw(rt, "to")
	m.answer(rt, "transfer", f.do(http.MethodPost, "/api/tickets/"+itoa(ticket)+"/transfer", map[string]any{"email": to}))
}

// Expire ends a hold's time now, as if its minutes had passed: its seats go
// to the next hold that asks, and its payment may still land.
func (m *sequence) Expire(rt *rapid.T) {
	if len(m.holds) == 0 {
		rt.Skip("no hold")
	}
	id := rapid.SampledFrom(m.holds).Draw(rt, "hold")
	pool, err := m.s.app.Shards.ForRow(id)
	if err != nil {
		rt.Fatalf("shard of hold %d: %v", id, err)
	}
	// One statement, so a deadlock with the sweeper or a hold changes nothing.
	if _, err := pool.Exec(context.Background(), `WITH h AS (UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1 AND status = 'active' RETURNING id)
		UPDATE event_seats SET held_until = now() - interval '1 second' WHERE hold_id IN (SELECT id FROM h) AND status = 'held'`, id); err != nil {
		rt.Skipf("expire hold %d: %v", id, err)
	}
}

// SaleStatus has the organizer close, reschedule or reopen the sale.
func (m *sequence) SaleStatus(rt *rapid.T) {
	status := rapid.SampledFrom([]string{"on_sale", "on_sale", "closed", "scheduled"}).Draw(rt, "status")
	m.answer(rt, "status", m.org.do(http.MethodPut, m.ev+"/status", map[string]any{"status": status}))
}

// Show has a fan open their tickets page: its codes are remembered with
// their holder, to be scanned later (after transfers and refunds too).
func (m *sequence) Show(rt *rapid.T) {
	i := rapid.IntRange(0, len(m.fans)-1).Draw(rt, "fan")
	r := m.fans[i].do(http.MethodGet, "/api/me/tickets", nil)
	m.answer(rt, "tickets", r)
	list, _ := r.Body["tickets"].([]any)
	for _, x := range list {
		one := m.fans[i].do(http.MethodGet, "/api/me/tickets/"+itoa(int64(x.(map[string]any)["id"].(float64))), nil)
		m.answer(rt, "ticket", one)
		tk, _ := one.Body["ticket"].(map[string]any)
		codes, _ := tk["codes"].([]any) // none for a used or void ticket
		for _, c := range codes {
			m.codes[c.(map[string]any)["code"].(string)] = m.ids[i]
		}
	}
}

// Scan has the door scan a code once shown: it admits only a ticket of a
// paid order, and only with its holder's current code.
func (m *sequence) Scan(rt *rapid.T) {
	if len(m.codes) == 0 {
		rt.Skip("no code shown")
	}
	var shown []string
	for c := range m.codes {
		shown = append(shown, c)
	}
	slices.Sort(shown)
	code := rapid.SampledFrom(shown).Draw(rt, "code")
	r := m.door.do(http.MethodPost, m.ev+"/checkins", map[string]any{"code": code, "gate": "North", "scan_id": fmt.Sprint(time.Now().UnixNano())})
	m.answer(rt, "scan", r)
	if r.Body["outcome"] != "admitted" {
		return
	}
	*m.admitted++
	ticket := int64(r.Body["ticket_id"].(float64))
	paid := m.s.count(m.t, `SELECT count(*)::int FROM tickets t JOIN orders o ON o.id = t.order_id WHERE t.id = $1 AND o.status = 'paid'`, ticket)
	if paid != 1 {
		rt.Fatalf("the door admitted ticket %d, whose order is not paid", ticket)
	}
	if m.s.count(m.t, `SELECT count(*)::int FROM ticket_keys WHERE ticket_id = $1 AND holder_id = $2`, ticket, m.codes[code]) != 1 {
		rt.Fatalf("the door admitted ticket %d with the code of a former holder", ticket)
	}
}

func (m *sequence) Relog(rt *rapid.T) {
	i := rapid.IntRange(0, len(m.fans)-1).Draw(rt, "fan")
	m.answer(rt, "logout", m.fans[i].do(http.MethodDelete, "/api/session", nil))
	m.answer(rt, "login", m.fans[i].do(http.MethodPost, "/api/session", map[string]any{"email": m.emails[i], "password": "a long enough password"}))
}

func (m *sequence) Check(rt *rapid.T) {
	for what, q := range map[string]string{
		"seats held by an ended hold":           `SELECT count(*)::int FROM event_seats s JOIN holds h ON h.id = s.hold_id WHERE s.status = 'held' AND h.status <> 'active'`,
		"seats sold but not to a paid order":    `SELECT count(*)::int FROM event_seats s JOIN orders o ON o.id = s.order_id WHERE s.status = 'sold' AND o.status NOT IN ('paid', 'refunded')`,
		"accounts over their ticket limit":      `SELECT count(*)::int FROM (SELECT o.user_id FROM orders o WHERE o.status = 'paid' OR (o.status = 'pending' AND EXISTS (SELECT 1 FROM holds h WHERE h.id = o.hold_id AND h.status = 'active' AND h.expires_at > now())) GROUP BY o.user_id HAVING sum(o.ticket_count) > 6) x`,
		"paid orders without all their tickets": `SELECT count(*)::int FROM orders o WHERE o.status = 'paid' AND o.ticket_count <> (SELECT count(*) FROM tickets k WHERE k.order_id = o.id)`,
		"standing places lost or made up": `SELECT count(*)::int FROM ga_pools p WHERE p.capacity <> (SELECT sum(remaining) FROM ga_slots WHERE pool_id = p.id)
			+ (SELECT coalesce(sum(cardinality(i.slots)), 0) FROM order_items i JOIN orders o ON o.id = i.order_id JOIN holds h ON h.id = o.hold_id
			   WHERE i.pool_id = p.id AND h.status IN ('active', 'converted'))`,
		"standing places sold but not to a paid order": `SELECT count(*)::int FROM order_items i JOIN orders o ON o.id = i.order_id JOIN holds h ON h.id = o.hold_id
			WHERE i.pool_id IS NOT NULL AND h.status = 'converted' AND o.status NOT IN ('paid', 'refunded')`,
	} {
		if n := m.s.count(m.t, q); n != 0 {
			rt.Fatalf("%s: %d", what, n)
		}
	}
}
