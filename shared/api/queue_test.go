package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/admission"
	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/localenv"
)

// TestWaitingRoomFailsClosed runs a waiting room on a Redis of its own,
// kills that Redis mid-sale and brings it back, with and without its data.
func TestWaitingRoomFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	port, err := localenv.FreePort() // a fixed port would be another test run's Redis
	require.NoError(t, err)
	redisEnv := localenv.Env{Dir: t.TempDir(), RedisPort: port}
	require.NoError(t, redisEnv.StartRedis(ctx))
	t.Cleanup(func() { redisEnv.StopRedis() })
	a := apptest.New(t, 1, func(c *config.Config) { c.RedisAddr = redisEnv.RedisAddr() })
	srv := serve(t, a)
	ctl := a.Admission()

	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Queue Arena", "Belém", 100, 10))
	gatedID := createEvent(t, o, venueID, "Gated", true)
	otherID := createEvent(t, o, venueID, "Other gated", true)
	seats := seatIDs(t, a, venueID)
	e, err := a.Events.Get(ctx, gatedID)
	require.NoError(t, err)
	e.WaitingRoom.Ceiling = 1
	tick := func() {
		t.Helper()
		_, err := ctl.Tick(ctx, e)
		require.NoError(t, err)
	}
	queueURL := "/api/events/" + itoa(gatedID) + "/queue"
	holds := "/api/events/" + itoa(gatedID) + "/holds"

	ana, bia := newFan(t, srv), newFan(t, srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	tick() // publishes the settings; the sale started an hour ago, so this also draws
	r := ana.do(http.MethodPost, queueURL, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "waiting", r.Body["state"])
	require.NotEmpty(t, r.Body["queue_ticket"])
	r = bia.do(http.MethodPost, queueURL, nil)
	require.Equal(t, "waiting", r.Body["state"])
	tick()

	r = ana.do(http.MethodGet, queueURL, nil)
	require.Equal(t, "admitted", r.Body["state"], string(r.Raw))
	require.NotEmpty(t, r.Body["admission_token"])
	r = bia.do(http.MethodGet, queueURL, nil)
	require.Equal(t, "waiting", r.Body["state"])
	require.EqualValues(t, 1, r.Body["position"], "Bia is next; the ceiling of 1 is taken by Ana")
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"seats": seats[5:6]}, "Idempotency-Key", "b1"),
		http.StatusForbidden, "admission-required")
	r = ana.do(http.MethodPost, holds, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "a1")
	require.Equal(t, http.StatusCreated, r.Status, "the admission cookie lets Ana hold: %s", r.Raw)
	requireProblem(t, ana.do(http.MethodPost, "/api/events/"+itoa(otherID)+"/holds", map[string]any{"seats": seats[:1]}, "Idempotency-Key", "a2"),
		http.StatusForbidden, "admission-required")

	progress := ana.do(http.MethodGet, queueURL+"/progress", nil)
	require.Equal(t, http.StatusOK, progress.Status)
	require.Equal(t, "public, max-age=1", progress.Header.Get("Cache-Control"))
	require.EqualValues(t, 1, progress.Body["waiting"])

	// Redis dies mid-sale.
	require.NoError(t, redisEnv.KillRedis())
	r = bia.do(http.MethodGet, queueURL, nil)
	requireProblem(t, r, http.StatusServiceUnavailable, "waiting-room-unavailable")
	require.Equal(t, true, r.Body["place_kept"])
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	carol := newFan(t, srv)
	carol.signUp("carol@example.com")
	requireProblem(t, carol.do(http.MethodPost, queueURL, nil), http.StatusServiceUnavailable, "waiting-room-unavailable")
	_, err = ctl.Tick(ctx, e)
	require.Error(t, err, "no admission without Redis")
	r = ana.do(http.MethodPost, holds, map[string]any{"seats": seats[1:2]}, "Idempotency-Key", "a3")
	require.Equal(t, http.StatusCreated, r.Status, "admitted fans keep buying: the token needs no lookup")

	// Redis comes back without its data (a failover that lost everything).
	e, err = a.Events.Get(ctx, gatedID) // the catalog now knows the room was published
	require.NoError(t, err)
	require.NotNil(t, e.WaitingRoom.PublishedAt)
	e.WaitingRoom.Ceiling = 1
	require.NoError(t, os.RemoveAll(filepath.Join(redisEnv.Dir, "redis")))
	require.NoError(t, redisEnv.StartRedis(ctx))
	res, err := ctl.Tick(ctx, e)
	require.NoError(t, err)
	require.True(t, res.Recovering, "a lost state admits at the conservative rate")
	r = bia.do(http.MethodGet, queueURL, nil)
	require.Equal(t, "waiting", r.Body["state"], "the signed queue ticket put Bia back in line: %s", r.Raw)
	deadline := time.Now().Add(10 * time.Second)
	for r.Body["state"] != "admitted" && time.Now().Before(deadline) {
		tick()
		r = bia.do(http.MethodGet, queueURL, nil)
	}
	require.Equal(t, "admitted", r.Body["state"], "admission resumes after recovery")
	r = bia.do(http.MethodPost, holds, map[string]any{"seats": seats[5:6]}, "Idempotency-Key", "b2")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
}

// gatedRoom is an app serving one on-sale event whose waiting room has a
// ceiling of 1, with an organizer and a way to run admission ticks.
type gatedRoom struct {
	srv     *httptest.Server
	o       *fan
	venueID int64
	id      int64
	seats   []int64
	e       event.Event
	ctl     *admission.Controller
	a       *app.App
}

func newGatedRoom(t *testing.T, venueName string) *gatedRoom {
	a := apptest.New(t, 1)
	g := &gatedRoom{srv: serve(t, a), ctl: a.Admission(), a: a}
	g.o = organizerFan(t, a, g.srv)
	g.venueID = importVenue(t, g.o, venue.Stadium(venueName, "Natal", 20, 10))
	g.id = createEvent(t, g.o, g.venueID, "Gated", true)
	g.seats = seatIDs(t, a, g.venueID)
	var err error
	g.e, err = a.Events.Get(context.Background(), g.id)
	require.NoError(t, err)
	g.e.WaitingRoom.Ceiling = 1
	return g
}

// tick runs one admission tick (the first publishes the room and draws:
// the sale started an hour ago).
func (g *gatedRoom) tick(t *testing.T) {
	t.Helper()
	_, err := g.ctl.Tick(context.Background(), g.e)
	require.NoError(t, err)
}

func TestLeavingTheRoomLetsTheNextFanIn(t *testing.T) {
	t.Parallel()
	g := newGatedRoom(t, "Leave Arena")
	srv := g.srv
	tick := func() { g.tick(t) }
	queueURL := "/api/events/" + itoa(g.id) + "/queue"
	ana, bia := newFan(t, srv), newFan(t, srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	tick()
	ana.do(http.MethodPost, queueURL, nil)
	tick()
	bia.do(http.MethodPost, queueURL, nil)
	tick()
	require.Equal(t, "admitted", ana.do(http.MethodGet, queueURL, nil).Body["state"])
	require.Equal(t, "waiting", bia.do(http.MethodGet, queueURL, nil).Body["state"])

	anon := newFan(t, srv)
	requireProblem(t, anon.do(http.MethodDelete, queueURL, nil), http.StatusUnauthorized, "unauthenticated")
	r := ana.do(http.MethodDelete, queueURL, nil)
	require.Equal(t, http.StatusNoContent, r.Status, string(r.Raw))
	require.Equal(t, http.StatusNoContent, ana.do(http.MethodDelete, queueURL, nil).Status, "leaving twice is fine")
	tick()
	require.Equal(t, "admitted", bia.do(http.MethodGet, queueURL, nil).Body["state"], "Ana's slot went to Bia at once")
	require.Equal(t, "none", ana.do(http.MethodGet, queueURL, nil).Body["state"])
}

// TestJoinSaysHowManyAreAhead: the join answers the same position and
// ahead count as the status, for new places and for a fan who left and
// came back.
func TestJoinSaysHowManyAreAhead(t *testing.T) {
	t.Parallel()
	g := newGatedRoom(t, "Ahead Arena")
	queueURL := "/api/events/" + itoa(g.id) + "/queue"
	g.tick(t) // publishes and draws; no further tick, so nobody is admitted
	var fans []*fan
	for i := range 4 {
		f := newFan(t, g.srv)
		f.signUp("ahead" + itoa(int64(i)) + "@example.com")
		fans = append(fans, f)
		j := f.do(http.MethodPost, queueURL, nil)
		s := f.do(http.MethodGet, queueURL, nil)
		require.Equal(t, "waiting", j.Body["state"])
		require.EqualValues(t, i, j.Body["ahead"], "fan %d: %s", i, j.Raw)
		require.EqualValues(t, i+1, j.Body["position"])
		require.Equal(t, s.Body["ahead"], j.Body["ahead"])
		require.Equal(t, s.Body["position"], j.Body["position"])
	}
	require.Equal(t, http.StatusNoContent, fans[0].do(http.MethodDelete, queueURL, nil).Status)
	j := fans[0].do(http.MethodPost, queueURL, nil)
	require.EqualValues(t, 3, j.Body["ahead"], "back at the end: %s", j.Raw)
	require.EqualValues(t, 4, j.Body["position"])
	j = fans[0].do(http.MethodPost, queueURL, nil)
	require.EqualValues(t, 3, j.Body["ahead"], "a repeated join says the same: %s", j.Raw)

}

func TestQueueOnEventWithoutWaitingRoom(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Open Arena", "Belém", 100, 10))
	id := createEvent(t, o, venueID, "Open", false)
	f := newFan(t, srv)
	f.signUp("f@example.com")
	requireProblem(t, f.do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil), http.StatusConflict, "no-waiting-room")
	require.Equal(t, "closed", f.do(http.MethodGet, "/api/events/"+itoa(id)+"/queue", nil).Body["state"])
	requireProblem(t, newFan(t, srv).do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil), http.StatusUnauthorized, "unauthenticated")

	// An event that does not exist (or is a draft, which fans cannot see)
	// has no waiting room to be closed: joining, asking or leaving is a 404.
	draft := o.do(http.MethodPost, "/api/events", map[string]any{"venue_id": venueID, "layout_version": 1, "name": "Draft", "draft": true,
		"starts_at": time.Now().Add(72 * time.Hour), "sale_starts_at": time.Now(), "sale_ends_at": time.Now().Add(71 * time.Hour),
		"price_levels": []map[string]any{{"code": "A", "price_cents": 1}, {"code": "B", "price_cents": 1}, {"code": "C", "price_cents": 1}, {"code": "GA", "price_cents": 1}}})
	require.Equal(t, http.StatusCreated, draft.Status, string(draft.Raw))
	for _, missing := range []int64{1 << 40, int64(draft.Body["id"].(float64))} {
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			requireProblem(t, f.do(method, "/api/events/"+itoa(missing)+"/queue", nil), http.StatusNotFound, "event-not-found")
		}
		requireProblem(t, newFan(t, srv).do(http.MethodGet, "/api/events/"+itoa(missing)+"/queue/progress", nil), http.StatusNotFound, "event-not-found")
	}
	require.Equal(t, http.StatusOK, newFan(t, srv).do(http.MethodGet, "/api/events/"+itoa(id)+"/queue/progress", nil).Status,
		"an event without a room shows its empty counters")
}

// A room the controller has not published yet is opening, not absent:
// "buy directly" would meet the edge's gate (make dev's demo buyers did).
// It is a state to wait in, not a 5xx: every on-sale without a pre-queue
// opens with it, and a 503 fired the 5xx alarm each time.
func TestJoinBeforeTheRoomIsPublishedIsRetried(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	id := createEvent(t, o, importVenue(t, o, venue.Stadium("Gated Arena", "Belém", 100, 10)), "Gated", true)
	f := newFan(t, srv)
	f.signUp("early@example.com")
	r := f.do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "opening", r.Body["state"])
	require.Equal(t, "1", r.Header.Get("Retry-After"))
	require.Empty(t, r.Header.Values("Set-Cookie"), "no place yet, so no ticket")
}

// A room the controller will not publish (the sale is next week, closed,
// cancelled or over) is not opening: a 503 with Retry-After: 1 had the
// waiting-room page retry for good, telling the fan their place was kept.
func TestJoinOfARoomThatIsNotOpeningIsRefused(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Later Arena", "Belém", 100, 10))
	f := newFan(t, srv)
	f.signUp("later@example.com")
	join := func(id int64) response { return f.do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil) }

	now := time.Now().UTC().Truncate(time.Second)
	saleStarts := now.Add(7 * 24 * time.Hour)
	r := o.do(http.MethodPost, "/api/events", map[string]any{
		"venue_id": venueID, "layout_version": 1, "name": "Next week",
		"starts_at": saleStarts.Add(48 * time.Hour), "sale_starts_at": saleStarts, "sale_ends_at": saleStarts.Add(47 * time.Hour),
		"price_levels": []map[string]any{{"code": "A", "price_cents": 9000}, {"code": "B", "price_cents": 7000}, {"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}},
		"waiting_room": map[string]any{"enabled": true},
	})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	later := int64(r.Body["id"].(float64))
	r = join(later)
	requireProblem(t, r, http.StatusConflict, "queue-not-open")
	require.Equal(t, saleStarts.Add(-30*time.Minute).Format(time.RFC3339), r.Body["opens_at"], "the pre-queue opens half an hour before the sale")

	for _, status := range []string{"closed", "cancelled"} {
		id := createEvent(t, o, venueID, "Gated "+status, true)
		r := o.do(http.MethodPut, "/api/events/"+itoa(id)+"/status", map[string]any{"status": status})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		requireProblem(t, join(id), http.StatusForbidden, "sales-closed")
	}
}

// TestRoomSequencesAnAttackerWouldTry drives the waiting room over HTTP as
// an attacker would: leave then re-join with the kept queue ticket, release
// a hold (the turn goes on), leave, then re-join, reuse the admission token after leaving, and fire
// holds in a burst. Nobody jumps the line, and active shoppers never exceed
// the ceiling.
func TestRoomSequencesAnAttackerWouldTry(t *testing.T) {
	t.Parallel()
	g := newGatedRoom(t, "Attack Arena")
	srv, o, seats, e := g.srv, g.o, g.seats, g.e
	queueURL := "/api/events/" + itoa(g.id) + "/queue"
	holds := "/api/events/" + itoa(g.id) + "/holds"
	tick := func() {
		t.Helper()
		g.tick(t)
		p := o.do(http.MethodGet, queueURL+"/progress", nil)
		require.LessOrEqual(t, p.Body["active"], p.Body["ceiling"], "active shoppers never exceed the ceiling")
	}
	state := func(f *fan) (string, any) {
		t.Helper()
		r := f.do(http.MethodGet, queueURL, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return r.Body["state"].(string), r.Body["position"]
	}

	ana, bia, carol := newFan(t, srv), newFan(t, srv), newFan(t, srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	carol.signUp("carol@example.com")
	tick() // publishes and draws: the sale started an hour ago
	anaTicket := ana.do(http.MethodPost, queueURL, nil).Body["queue_ticket"].(string)
	bia.do(http.MethodPost, queueURL, nil)
	carol.do(http.MethodPost, queueURL, nil)
	tick()
	r := ana.do(http.MethodGet, queueURL, nil)
	require.Equal(t, "admitted", r.Body["state"], string(r.Raw))
	anaToken := r.Body["admission_token"].(string)
	exp, err := time.Parse(time.RFC3339, r.Body["admission_expires_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Duration(e.WaitingRoom.ActiveTTL)*time.Second), exp, 5*time.Second,
		"the token lasts as long as the shopping slot, not the longer pickup window")

	// Ana leaves, keeps her admission token and her queue ticket.
	require.Equal(t, http.StatusNoContent, ana.do(http.MethodDelete, queueURL, nil).Status)
	requireProblem(t, ana.do(http.MethodPost, holds, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "a1", "X-Admission-Token", anaToken),
		http.StatusForbidden, "admission-required")
	tick()
	st, _ := state(bia)
	require.Equal(t, "admitted", st, "Ana's slot went to Bia")
	r = ana.do(http.MethodPost, queueURL, nil, "X-Queue-Ticket", anaTicket)
	require.Equal(t, "waiting", r.Body["state"], string(r.Raw))
	st, pos := state(ana)
	require.Equal(t, "waiting", st)
	require.EqualValues(t, 2, pos, "Ana's old place is served: she re-joins behind Carol")
	requireProblem(t, ana.do(http.MethodPost, holds, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "a2", "X-Admission-Token", anaToken),
		http.StatusForbidden, "admission-required")

	// Bia holds and releases: her turn goes on (she picks other seats in
	// the time it has left) and her slot stays hers, so Carol still waits.
	r = bia.do(http.MethodPost, holds, map[string]any{"seats": seats[:1]}, "Idempotency-Key", "b1")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.Equal(t, http.StatusOK, bia.do(http.MethodDelete, "/api/holds/"+itoa(int64(r.Body["hold_id"].(float64))), nil).Status)
	tick()
	st, _ = state(carol)
	require.Equal(t, "waiting", st, "a release does not give Bia's slot away")
	r = bia.do(http.MethodPost, holds, map[string]any{"seats": seats[1:2]}, "Idempotency-Key", "b2")
	require.Equal(t, http.StatusCreated, r.Status, "a release keeps the turn: %s", r.Raw)
	require.Equal(t, http.StatusOK, bia.do(http.MethodDelete, "/api/holds/"+itoa(int64(r.Body["hold_id"].(float64))), nil).Status)
	// Then she leaves, and the page re-joins on load with her ticket cookie.
	require.Equal(t, http.StatusNoContent, bia.do(http.MethodDelete, queueURL, nil).Status)
	requireProblem(t, bia.do(http.MethodPost, holds, map[string]any{"seats": seats[1:2]}, "Idempotency-Key", "b3"),
		http.StatusForbidden, "admission-required")
	require.Equal(t, "waiting", bia.do(http.MethodPost, queueURL, nil).Body["state"])
	st, pos = state(bia)
	require.Equal(t, "waiting", st)
	require.EqualValues(t, 3, pos, "behind Carol and Ana, not back at the front")
	tick()
	st, _ = state(carol)
	require.Equal(t, "admitted", st, "admission follows place order among fans still waiting")

	// Carol fires holds in a burst: the bucket answers 429 with Retry-After.
	var last response
	for i := range 12 {
		last = carol.do(http.MethodPost, holds, map[string]any{"pool": "FLOOR", "quantity": 0}, "Idempotency-Key", "c"+itoa(int64(i)))
		if last.Status == http.StatusTooManyRequests {
			require.GreaterOrEqual(t, i, 10, "the burst allows ten attempts")
			break
		}
		requireProblem(t, last, http.StatusBadRequest, "invalid-hold")
	}
	requireProblem(t, last, http.StatusTooManyRequests, "slow-down")
	require.NotEmpty(t, last.Header.Get("Retry-After"))
}

// tripsKey marks a request's context with the counter of its Redis round
// trips; tripCounter, a go-redis hook, adds every command and every
// pipeline sent under such a context.
type tripsKey struct{}

type tripCounter struct{}

func (tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		countTrip(ctx)
		return next(ctx, cmd)
	}
}

func (tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		countTrip(ctx)
		return next(ctx, cmds)
	}
}

func countTrip(ctx context.Context) {
	if n, ok := ctx.Value(tripsKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

// TestJoinAndStatusAreOneRedisRoundTrip counts the Redis round trips behind
// each join and status request in the states a fan meets, the rate limit's
// answer included: one each (issue 18). The session is checked on its
// signature, the bucket and the ETA are in the script. The waiting room's
// door is on (issue 31): a clean fan's risk score is read from its session
// and headers, at no Redis cost.
func TestJoinAndStatusAreOneRedisRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := apptest.New(t, 1, withChallenge, velocity) // the door and the velocity rule on, as in production
	var trips atomic.Int64
	a.Redis.AddHook(tripCounter{})
	h := validated(t, a.Handler())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tripsKey{}, &trips)))
	}))
	t.Cleanup(srv.Close)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Trip Arena", "Natal", 20, 10))
	gatedID := createEvent(t, o, venueID, "Gated", true)
	openID := createEvent(t, o, venueID, "Open", false)
	e, err := a.Events.Get(ctx, gatedID)
	require.NoError(t, err)
	e.WaitingRoom.Ceiling = 1
	ctl := a.Admission()
	tick := func() {
		t.Helper()
		_, err := ctl.Tick(ctx, e)
		require.NoError(t, err)
	}
	gated, open := "/api/events/"+itoa(gatedID)+"/queue", "/api/events/"+itoa(openID)+"/queue"
	call := func(f *fan, method, path string) response {
		t.Helper()
		trips.Store(0)
		r := f.do(method, path, nil)
		require.EqualValues(t, 1, trips.Load(), "%s %s answering %d %s: Redis round trips", method, path, r.Status, r.Raw)
		return r
	}
	ana, bia, carol, warm := newFan(t, srv), newFan(t, srv), newFan(t, srv), newFan(t, srv)
	ana.signUp("ana@example.com")
	bia.signUp("bia@example.com")
	carol.signUp("carol@example.com")
	warm.signUp("warm@example.com")
	for f, email := range map[*fan]string{ana: "ana@example.com", bia: "bia@example.com", carol: "carol@example.com", warm: "warm@example.com"} {
		settled(t, a, f, srv, email)
	}
	tick() // publishes and draws: the sale started an hour ago
	// A Redis that has not seen a script yet costs one more trip to load it.
	warm.do(http.MethodPost, gated, nil)
	warm.do(http.MethodGet, gated, nil)
	warm.do(http.MethodDelete, gated, nil)

	require.Equal(t, "waiting", call(ana, http.MethodPost, gated).Body["state"])
	require.Equal(t, "waiting", call(ana, http.MethodPost, gated).Body["state"], "joining again")
	require.Equal(t, "waiting", call(ana, http.MethodGet, gated).Body["state"])
	require.Equal(t, "waiting", call(carol, http.MethodPost, gated).Body["state"])
	require.Equal(t, "waiting", call(bia, http.MethodPost, gated).Body["state"])
	tick()
	r := call(ana, http.MethodGet, gated)
	require.Equal(t, "admitted", r.Body["state"])
	require.NotEmpty(t, r.Body["admission_token"])
	require.Equal(t, "admitted", call(ana, http.MethodPost, gated).Body["state"])
	r = call(bia, http.MethodGet, gated)
	require.Equal(t, "waiting", r.Body["state"])
	require.EqualValues(t, 2, r.Body["position"])
	require.EqualValues(t, 60, r.Body["eta_seconds"], "one ahead at one admission a minute: the ETA comes from the same script")
	requireProblem(t, call(ana, http.MethodPost, open), http.StatusConflict, "no-waiting-room")
	require.Equal(t, "closed", call(ana, http.MethodGet, open).Body["state"])
	// The bucket (20 calls, then one every 2 s) answers in the same trip.
	for range 20 {
		if r = call(bia, http.MethodGet, gated); r.Status == http.StatusTooManyRequests {
			break
		}
	}
	requireProblem(t, r, http.StatusTooManyRequests, "slow-down")
	require.NotEmpty(t, r.Header.Get("Retry-After"))

	// A new account is looked at closer: its join also counts the
	// device's and the network's joins of the minute (a pipeline to the
	// event's slot) and reads the account's velocity flag (its own slot),
	// two more round trips, and passes when they are few and unflagged.
	dora := newFan(t, srv)
	dora.signUp("dora@example.com")
	trips.Store(0)
	r = dora.do(http.MethodPost, gated, nil)
	require.Equal(t, "waiting", r.Body["state"], string(r.Raw))
	require.EqualValues(t, 3, trips.Load(), "a new account's join: the counters, the velocity flag, then the script")
}
