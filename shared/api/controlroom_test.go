package api_test

import (
	"context"
	"encoding/base32"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/controlroom"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/tools/pspsim"
)

// TestControlRoomOverHTTP: the control room shows the line, the
// admissions and the joins; a pause stops admission at the next tick and a
// resume restarts it; only the event's organizer sees or steers it.
func TestControlRoomOverHTTP(t *testing.T) {
	t.Parallel()
	g := newGatedRoom(t, "Control Arena")
	ctx := context.Background()
	base := "/api/events/" + itoa(g.id)
	g.tick(t) // publishes the room and draws (the sale started an hour ago)
	fans := make([]*fan, 3)
	for i := range fans {
		fans[i] = newFan(t, g.srv)
		fans[i].signUp("line" + itoa(int64(i)) + "@example.com")
		require.Equal(t, http.StatusOK, fans[i].do(http.MethodPost, base+"/queue", nil).Status)
	}
	g.tick(t) // ceiling 1: one fan in

	r := g.o.do(http.MethodGet, base+"/control-room", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	q := r.Body["queue"].(map[string]any)
	require.EqualValues(t, 2, q["waiting"])
	require.EqualValues(t, 1, q["active"])
	require.EqualValues(t, 1, q["admitted_total"])
	require.NotNil(t, q["eta_seconds"], "two waiting, one admitted a minute: the line has an ETA")
	series := r.Body["series"].(map[string]any)
	last := func(name string) any { v := series[name].([]any); return v[len(v)-1] }
	require.EqualValues(t, 3, last("joins_per_min"))
	require.EqualValues(t, 1, last("admissions_per_min"))
	require.EqualValues(t, 2, last("waiting"))
	require.Len(t, series["joins_per_min"].([]any), 60, "ten minutes of ten-second steps")
	sections := r.Body["seats"].(map[string]any)["sections"].([]any)
	require.NotEmpty(t, sections)
	require.Equal(t, "private, max-age=1", r.Header.Get("Cache-Control"))

	other := organizerNamed(t, g.a, g.srv, "rival@example.com")
	requireProblem(t, other.do(http.MethodGet, base+"/control-room", nil), http.StatusNotFound, "event-not-found")
	requireProblem(t, fans[0].do(http.MethodGet, base+"/control-room", nil), http.StatusForbidden, "organizer-only")
	requireProblem(t, g.o.do(http.MethodGet, "/api/events/999999/control-room", nil), http.StatusNotFound, "event-not-found")

	admission := base + "/admission"
	requireProblem(t, g.o.do(http.MethodPut, admission, map[string]any{}), http.StatusBadRequest, "invalid-admission")
	requireRefusal(t, g.o.do(http.MethodPut, admission, map[string]any{"paused": true, "ceiling": 0}), http.StatusBadRequest, "invalid-event",
		"The ceiling must be between 1 and 1000000 shoppers at once.", "/ceiling")
	requireProblem(t, other.do(http.MethodPut, admission, map[string]any{"paused": true, "ceiling": 5}), http.StatusNotFound, "event-not-found")
	requireProblem(t, fans[0].do(http.MethodPut, admission, map[string]any{"paused": true, "ceiling": 5}), http.StatusForbidden, "organizer-only")

	// Pause, then free the one shopping slot: the next tick admits nobody;
	// after a resume, the same tick admits the next fan.
	tickWith := func(paused bool) queue.TickResult {
		r := g.o.do(http.MethodPut, admission, map[string]any{"paused": paused, "ceiling": 1})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, paused, r.Body["waiting_room"].(map[string]any)["paused"])
		e, err := g.a.Events.Get(ctx, g.id) // what the controller reads each second
		require.NoError(t, err)
		res, err := g.ctl.Tick(ctx, e)
		require.NoError(t, err)
		return res
	}
	require.Equal(t, http.StatusNoContent, fans[0].do(http.MethodDelete, base+"/queue", nil).Status)
	res := tickWith(true)
	require.Zero(t, res.Admitted, "paused: nobody admitted")
	require.EqualValues(t, 2, res.Waiting)
	res = tickWith(false)
	require.EqualValues(t, 1, res.Admitted, "resumed: the line moves at once")
	require.EqualValues(t, 1, res.Waiting)
}

// counter counts Redis commands and round trips, and SQL statements and
// round trips.
type counter struct {
	redisCmds, redisTrips, sqlStatements, sqlTrips atomic.Int64
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.redisCmds.Add(1)
		c.redisTrips.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.redisCmds.Add(int64(len(cmds)))
		c.redisTrips.Add(1)
		return next(ctx, cmds)
	}
}
func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.sqlStatements.Add(1)
	c.sqlTrips.Add(1)
	return ctx
}
func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *counter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.sqlTrips.Add(1)
	return ctx
}
func (c *counter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.sqlStatements.Add(1)
}
func (c *counter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestControlRoomCostDoesNotGrowWithTheLine builds the control room with
// 10 and then 10,000 fans waiting, counting every Redis command and SQL
// statement it sends: the counts are the same.
func TestControlRoomCostDoesNotGrowWithTheLine(t *testing.T) {
	t.Parallel()
	g := newGatedRoom(t, "Cost Arena")
	ctx := context.Background()
	g.tick(t)
	var c counter
	rdb := redis.NewClient(&redis.Options{Addr: g.a.Config.RedisAddr})
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(&c)
	pc, err := pgxpool.ParseConfig(g.a.Config.Shards[g.e.Shard])
	require.NoError(t, err)
	pc.ConnConfig.Tracer = &c
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	room := g.a.Room
	cr := controlroom.New(queue.New(rdb, g.a.Config.RedisPrefix), shard.New(g.a.Catalog, map[int]*pgxpool.Pool{g.e.Shard: pool}, nil))
	join := func(from, to int64) {
		sem := make(chan struct{}, 8)
		errs := make(chan error, to-from)
		for acct := from; acct < to; acct++ {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				_, err := room.Join(ctx, g.id, 1_000_000+acct, 0)
				errs <- err
			}()
		}
		for range to - from {
			require.NoError(t, <-errs)
		}
	}
	measure := func() (cmds, trips, statements, sqlTrips int64) {
		c.redisCmds.Store(0)
		c.redisTrips.Store(0)
		c.sqlStatements.Store(0)
		c.sqlTrips.Store(0)
		v, err := cr.Build(ctx, g.e)
		require.NoError(t, err)
		require.Positive(t, v.Queue.Waiting)
		return c.redisCmds.Load(), c.redisTrips.Load(), c.sqlStatements.Load(), c.sqlTrips.Load()
	}
	join(0, 10)
	measure() // connections open and say hello
	cmds, trips, stmts, sqlTrips := measure()
	join(10, 10_000)
	cmds2, trips2, stmts2, sqlTrips2 := measure()
	t.Logf("control room at 10 and 10,000 waiting: %d/%d Redis commands in %d/%d round trips, %d/%d SQL statements in %d/%d round trips",
		cmds, cmds2, trips, trips2, stmts, stmts2, sqlTrips, sqlTrips2)
	require.Equal(t, cmds, cmds2)
	require.Equal(t, trips, trips2)
	require.Equal(t, stmts, stmts2)
	require.Equal(t, sqlTrips, sqlTrips2)
	require.LessOrEqual(t, trips, int64(3), "Redis: progress, gauges, series")
	require.Equal(t, int64(1), sqlTrips, "SQL: one batch on the event's shard")
}

// organizerOf logs the shop's organizer in.
func (s *shop) organizerOf(t testing.TB) *fan {
	t.Helper()
	o := newFan(t, s.srv)
	r := o.do(http.MethodPost, "/api/session", map[string]any{"email": "org@example.com", "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return o
}

// named gives the account of email a name of the test's choosing.
func (s *shop) named(t testing.TB, email, name string) {
	t.Helper()
	_, err := s.app.Catalog.Exec(context.Background(), `UPDATE accounts SET name = $2 WHERE lower(email) = lower($1)`, email, name)
	require.NoError(t, err)
}

// TestOrganizerRefundsAnOrder: a refund gives the money back once however
// often it is asked for, voids the tickets, and a refusal by the PSP is
// answered and kept on the order.
func TestOrganizerRefundsAnOrder(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	ana, anaOrder, _ := s.paidOrder(t, "ana@example.com", s.seats[:2]...)
	refund := "/api/orders/" + itoa(anaOrder) + "/refund"

	requireProblem(t, ana.do(http.MethodPost, refund, nil), http.StatusForbidden, "organizer-only")
	rival := organizerNamed(t, s.app, s.srv, "rival@example.com")
	requireProblem(t, rival.do(http.MethodPost, refund, nil), http.StatusNotFound, "order-not-found")
	requireProblem(t, rival.do(http.MethodGet, "/api/organizer/orders/"+itoa(anaOrder), nil), http.StatusNotFound, "order-not-found")
	requireProblem(t, o.do(http.MethodPost, "/api/orders/12x/refund", nil), http.StatusNotFound, "not-found")

	for i := range 2 {
		r := o.do(http.MethodPost, refund, nil)
		require.Equal(t, http.StatusOK, r.Status, "refund #%d: %s", i+1, r.Raw)
		require.Equal(t, "refunded", r.Body["status"])
		for _, tk := range r.Body["tickets"].([]any) {
			require.Equal(t, true, tk.(map[string]any)["void"])
		}
		require.Len(t, r.Body["refunds"].([]any), 1, "the second refund is a no-op")
	}
	refunds := 0
	for _, e := range s.sim.Ledger() {
		if e.Amount < 0 {
			refunds++
		}
	}
	require.Equal(t, 1, refunds, "the PSP gave the money back once")
	require.Equal(t, "refunded", s.orderStatus(t, ana, anaOrder).Body["status"], "the fan sees it")

	// A pending order has nothing to refund.
	bia := newFan(t, s.srv)
	bia.signUp("bia@example.com")
	_, pending := s.hold(t, bia, "h-bia", s.seats[5])
	requireRefusal(t, o.do(http.MethodPost, "/api/orders/"+itoa(pending)+"/refund", nil), http.StatusConflict, "order-not-refundable",
		"Only paid orders can be refunded: it is pending.", "")

	// The PSP refuses a refund for another amount than it charged.
	_, caio, _ := s.paidOrder(t, "caio@example.com", s.seats[3])
	s.named(t, "caio@example.com", "Caio")
	s.exec(t, caio, `UPDATE orders SET total_cents = total_cents + 1 WHERE id = $1`)
	requireProblem(t, o.do(http.MethodPost, "/api/orders/"+itoa(caio)+"/refund", nil), http.StatusConflict, "refund-refused")
	r := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(caio), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "paid", r.Body["status"], "a refused refund changes nothing")
	kept := r.Body["refunds"].([]any)
	require.Len(t, kept, 1)
	require.Equal(t, "refused", kept[0].(map[string]any)["status"])
	require.Contains(t, kept[0].(map[string]any)["failure"], "greater than unrefunded amount on charge")
	require.Equal(t, "Caio", r.Body["buyer"].(map[string]any)["name"])
	require.NotEmpty(t, r.Body["payments"])
	require.Zero(t, s.errors5xx.Load())
}

// TestConcurrentRefundsRefundOnce: a refund clicked many times at once
// (a double click, two organizers) records one refund and asks the PSP
// once; every click is answered with the refunded order.
func TestConcurrentRefundsRefundOnce(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	_, orderID, _ := s.paidOrder(t, "ana@example.com", s.seats[:2]...)
	refund := "/api/orders/" + itoa(orderID) + "/refund"

	const clicks = 12
	for _, r := range atOnce(clicks, func() response { return o.do(http.MethodPost, refund, nil) }) {
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "refunded", r.Body["status"])
	}
	r := o.do(http.MethodGet, "/api/organizer/orders/"+itoa(orderID), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["refunds"].([]any), 1, "one refund row for %d concurrent clicks", clicks)
	require.Equal(t, "succeeded", r.Body["refunds"].([]any)[0].(map[string]any)["status"])
	require.NotEmpty(t, r.Body["refunds"].([]any)[0].(map[string]any)["psp_refund_id"], "the row names the PSP's refund")
	refunds := 0
	for _, e := range s.sim.Ledger() {
		if e.Amount < 0 {
			refunds++
		}
	}
	require.Equal(t, 1, refunds, "the PSP gave the money back once")
	require.EqualValues(t, 1, s.refundCalls.Load(), "the PSP was asked once")
	require.Zero(t, s.errors5xx.Load())
}

// exec runs q with an order id on the order's shard.
func (s *shop) exec(t testing.TB, orderID int64, q string) {
	t.Helper()
	pool, err := s.app.Shards.ForRow(orderID)
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), q, orderID)
	require.NoError(t, err)
}

// TestOrganizerFindsOrdersAndExportsThem: search by email, order number
// and ticket code within the organizer's own events; CSV exports quote
// and defuse what buyers typed.
func TestOrganizerFindsOrdersAndExportsThem(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	o := s.organizerOf(t)
	_, anaOrder, _ := s.paidOrder(t, "Ana@Example.com", s.seats[0], s.seats[1])
	_, biaOrder, _ := s.paidOrder(t, "bia@example.com", s.seats[2])
	s.named(t, "ana@example.com", `=HYPERLINK("http://evil.example","x")`)
	s.named(t, "bia@example.com", `Bia "B", da Silva`)

	// The console's search box sends the query in the body.
	search := func(f *fan, q string) response {
		return f.do(http.MethodPost, "/api/organizer/orders", map[string]any{"q": q})
	}
	inURL := func(f *fan, q string) response {
		return f.do(http.MethodGet, "/api/organizer/orders?q="+url.QueryEscape(q), nil)
	}
	ids := func(r response) []int64 {
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		var out []int64
		for _, h := range r.Body["orders"].([]any) {
			out = append(out, int64(h.(map[string]any)["id"].(float64)))
		}
		return out
	}
	require.Equal(t, []int64{anaOrder}, ids(search(o, "ana@example.com")), "email, any case")
	require.Equal(t, []int64{biaOrder}, ids(search(o, itoa(biaOrder))))
	hit := search(o, itoa(biaOrder)).Body["orders"].([]any)[0].(map[string]any)
	require.Equal(t, "Paid Show", hit["event_name"])
	require.Equal(t, "bia@example.com", hit["buyer"].(map[string]any)["email"])
	var code string
	pool, err := s.app.Shards.ForRow(anaOrder)
	require.NoError(t, err)
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT code FROM tickets WHERE order_id = $1 LIMIT 1`, anaOrder).Scan(&code))
	require.Equal(t, []int64{anaOrder}, ids(search(o, code)), "issue-time ticket code")
	var ticket int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT id FROM tickets WHERE order_id = $1 LIMIT 1`, biaOrder).Scan(&ticket))
	printed := "S1." + itoa(ticket) + ".1." + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(make([]byte, 64))
	require.Equal(t, []int64{biaOrder}, ids(search(o, printed)), "printable door code")
	require.Equal(t, []int64{biaOrder}, ids(search(o, itoa(ticket))), "ticket number")

	// A URL keeps what is not a secret; a ticket code in one is refused
	// before anything is read, as it stays in access logs and history.
	require.Equal(t, []int64{anaOrder}, ids(inURL(o, "ana@example.com")))
	require.Equal(t, []int64{biaOrder}, ids(inURL(o, "#"+itoa(biaOrder))))
	require.Equal(t, []int64{biaOrder}, ids(inURL(o, itoa(ticket))))
	for _, c := range []string{code, printed, strings.ToLower(" " + printed)} {
		r := inURL(o, c)
		requireProblem(t, r, http.StatusBadRequest, "ticket-code-in-url")
		require.Contains(t, r.Body["detail"], "POST /api/organizer/orders")
	}
	require.Empty(t, ids(search(o, "nobody@example.com")))
	require.Empty(t, ids(search(o, "999999")))

	rival := organizerNamed(t, s.app, s.srv, "rival@example.com")
	require.Empty(t, ids(search(rival, itoa(biaOrder))), "another organizer finds nothing")
	require.Empty(t, ids(search(rival, "ana@example.com")))
	fanOnly := newFan(t, s.srv)
	fanOnly.signUp("nosy@example.com")
	requireProblem(t, search(fanOnly, "ana@example.com"), http.StatusForbidden, "organizer-only")
	requireProblem(t, inURL(fanOnly, code), http.StatusForbidden, "organizer-only")
	requireProblem(t, search(o, ""), http.StatusBadRequest, "invalid-query")
	requireProblem(t, search(o, "seat 12"), http.StatusBadRequest, "invalid-query")

	csvOf := func(f *fan, name string) [][]string {
		r := f.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/"+name, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
		require.Contains(t, r.Header.Get("Content-Disposition"), "attachment")
		rows, err := csv.NewReader(strings.NewReader(string(r.Raw))).ReadAll()
		require.NoError(t, err, "valid CSV")
		return rows
	}
	orders := csvOf(o, "orders.csv")
	require.Equal(t, []string{"order_id", "status", "buyer_email", "buyer_name", "tickets", "total", "currency", "created_at", "paid_at",
		"refunded", "refund_reason", "refund_note"}, orders[0])
	require.Len(t, orders, 3)
	byID := map[string][]string{}
	for _, row := range orders[1:] {
		byID[row[0]] = row
	}
	require.Equal(t, `'=HYPERLINK("http://evil.example","x")`, byID[itoa(anaOrder)][3], "a formula is defused")
	require.Equal(t, `Bia "B", da Silva`, byID[itoa(biaOrder)][3], "quotes and commas survive")
	require.Equal(t, "paid", byID[itoa(biaOrder)][1])
	require.Equal(t, "2", byID[itoa(anaOrder)][4])
	attendees := csvOf(o, "attendees.csv")
	require.Len(t, attendees, 4, "header and one line per ticket")
	require.Equal(t, "ticket_id", attendees[0][0])

	requireProblem(t, rival.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/orders.csv", nil), http.StatusNotFound, "event-not-found")
	requireProblem(t, fanOnly.do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/attendees.csv", nil), http.StatusForbidden, "organizer-only")
	require.Zero(t, s.errors5xx.Load())
}
