package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/apptest"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/localenv"
	"github.com/catraca/catraca/shared/venue"
)

// TestWaitingRoomFailsClosed runs a waiting room on a Redis of its own,
// kills that Redis mid-sale and brings it back, with and without its data.
func TestWaitingRoomFailsClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	redisEnv := localenv.Env{Dir: t.TempDir(), RedisPort: 56391}
	require.NoError(t, redisEnv.StartRedis(ctx))
	t.Cleanup(func() { redisEnv.StopRedis() })
	a := apptest.New(t, 1, func(c *config.Config) { c.RedisAddr = redisEnv.RedisAddr() })
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
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

func TestLeavingTheRoomLetsTheNextFanIn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := apptest.New(t, 1)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	o := organizerFan(t, a, srv)
	id := createEvent(t, o, importVenue(t, o, venue.Stadium("Leave Arena", "Natal", 20, 10)), "Gated", true)
	e, err := a.Events.Get(ctx, id)
	require.NoError(t, err)
	e.WaitingRoom.Ceiling = 1
	ctl := a.Admission()
	tick := func() {
		t.Helper()
		_, err := ctl.Tick(ctx, e)
		require.NoError(t, err)
	}
	queueURL := "/api/events/" + itoa(id) + "/queue"
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

func TestQueueOnEventWithoutWaitingRoom(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	o := organizerFan(t, a, srv)
	id := createEvent(t, o, importVenue(t, o, venue.Stadium("Open Arena", "Belém", 100, 10)), "Open", false)
	f := newFan(t, srv)
	f.signUp("f@example.com")
	requireProblem(t, f.do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil), http.StatusConflict, "no-waiting-room")
	requireProblem(t, newFan(t, srv).do(http.MethodPost, "/api/events/"+itoa(id)+"/queue", nil), http.StatusUnauthorized, "unauthenticated")
}
