package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/challenge"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// withChallenge turns the waiting room's door on as a deployment has it,
// with puzzles small enough for a test (8 bits at the threshold).
func withChallenge(c *config.Config) {
	c.Challenge = config.DefaultChallenge()
	c.ChallengeBits, c.ChallengeBitsMax = 8, 12
}

// settled makes f a fan who signed up a month before the on-sale,
// verified its email and logs in from a browser that has the device
// cookie: clean traffic.
func settled(t *testing.T, a *app.App, f *fan, srv *httptest.Server, email string) {
	t.Helper()
	_, err := a.Catalog.Exec(context.Background(), `UPDATE accounts SET created_at = now() - interval '30 days', email_verified_at = now() WHERE email = $1`, email)
	require.NoError(t, err)
	r := f.do(http.MethodPost, "/api/session", map[string]any{"email": email, "password": "a long enough password"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
}

// apiFan is an API client: a bearer session and no cookie jar, so it keeps
// no queue ticket between joins (a bot need not). header goes with its
// sign-up.
func apiFan(t *testing.T, srv *httptest.Server, email string, header ...string) (*fan, int64) {
	t.Helper()
	f := newFan(t, srv)
	r := f.do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": "a long enough password", "name": "Bot"}, header...)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	f.client = &http.Client{}
	f.header.Set("Authorization", "Bearer "+r.Body["token"].(string))
	return f, int64(r.Body["account"].(map[string]any)["id"].(float64))
}

// doorRoom serves an app with the door on (and options) and an event
// whose waiting room is open; it returns the app, its server and the
// room's path.
func doorRoom(t *testing.T, options ...func(*config.Config)) (*app.App, *httptest.Server, string) {
	t.Helper()
	a := apptest.New(t, 1, append([]func(*config.Config){withChallenge}, options...)...)
	srv := httptest.NewServer(validated(t, a.Handler()))
	t.Cleanup(srv.Close)
	o := organizerFan(t, a, srv)
	id := createEvent(t, o, importVenue(t, o, venue.Stadium("Door Arena", "Recife", 20, 10)), "Door Night", true)
	e, err := a.Events.Get(context.Background(), id)
	require.NoError(t, err)
	_, err = a.Admission().Tick(context.Background(), e)
	require.NoError(t, err)
	return a, srv, "/api/events/" + itoa(id) + "/queue"
}

// A device cookie counts when it is the one the session was issued with
// (the device this account signed up or logged in from): a bot that
// sends a made-up one, in the form the API makes, scores as a join
// without one; a fan's own browser passes.
func TestMadeUpDeviceCookieIsNoDevice(t *testing.T) {
	t.Parallel()
	_, srv, room := doorRoom(t)
	bot, _ := apiFan(t, srv, "bot@example.com")
	bot.header.Set("Cookie", risk.DeviceCookie+"="+fairness.NewDeviceID())
	r := bot.do(http.MethodPost, room, nil)
	challengeOf(t, r)
	require.Equal(t, "new-account,unverified-email,no-device", r.Body["risk"])

	ana := newFan(t, srv)
	ana.signUp("ana@example.com")
	r = ana.do(http.MethodPost, room, nil)
	require.Equal(t, http.StatusOK, r.Status, "the device of Ana's sign-up: %s", r.Raw)
}

// challengeOf reads the challenge a refused join carries.
func challengeOf(t *testing.T, r response) challenge.Challenge {
	t.Helper()
	requireProblem(t, r, http.StatusPreconditionRequired, "challenge-required")
	c, ok := r.Body["challenge"].(map[string]any)
	require.True(t, ok, "a challenge-required problem carries the challenge: %s", r.Raw)
	require.Equal(t, "pow", c["kind"])
	require.Equal(t, challenge.Algorithm, c["algorithm"])
	return challenge.Challenge{Kind: challenge.KindPoW, Token: c["token"].(string), Bits: int(c["bits"].(float64))}
}

// What an attacker would try at the door of the line, over HTTP: joining
// without solving, with a made-up or too-easy solution, with another
// account's solution, and replaying a solution that worked. Only a fresh
// solution of this account's own challenge gets a place, once.
func TestRiskyJoinMustSolveTheChallenge(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1, withChallenge)
	srv := httptest.NewServer(validated(t, a.Handler()))
	t.Cleanup(srv.Close)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Door Arena", "Recife", 20, 10))
	id := createEvent(t, o, venueID, "Door Night", true)
	e, err := a.Events.Get(context.Background(), id)
	require.NoError(t, err)
	_, err = a.Admission().Tick(context.Background(), e)
	require.NoError(t, err)
	room := "/api/events/" + itoa(id) + "/queue"
	bot, _ := apiFan(t, srv, "bot1@example.com")
	bot.header.Set(risk.BotHeader, "bot")
	other, _ := apiFan(t, srv, "bot2@example.com")
	other.header.Set(risk.BotHeader, "bot")

	// No solution: refused, with the puzzle, and no place.
	c := challengeOf(t, bot.do(http.MethodPost, room, nil))
	require.Equal(t, 11, c.Bits, "bot label 3 + new account 1 + unverified email 1 + no device 1 = 6: three steps over the threshold")
	require.Contains(t, bot.do(http.MethodPost, room, nil).Body["risk"], "bot-label")
	require.Equal(t, "none", bot.do(http.MethodGet, room, nil).Body["state"], "a refused join has no place")

	// Made-up and too-easy solutions.
	r := bot.do(http.MethodPost, room, map[string]any{"challenge": c.Token, "solution": "12345"})
	if challenge.ZeroBits(c.Token, "12345") < c.Bits {
		requireProblem(t, r, http.StatusForbidden, "challenge-failed")
		require.Equal(t, challenge.ReasonTooEasy, r.Body["reason"])
	}
	easy := challenge.Solve(challenge.Challenge{Token: c.Token, Bits: 1})
	if challenge.ZeroBits(c.Token, easy) < c.Bits {
		r = bot.do(http.MethodPost, room, map[string]any{"challenge": c.Token, "solution": easy})
		requireProblem(t, r, http.StatusForbidden, "challenge-failed")
		require.Equal(t, challenge.ReasonTooEasy, r.Body["reason"])
	}
	r = bot.do(http.MethodPost, room, map[string]any{"challenge": c.Token + "x", "solution": "1"})
	requireProblem(t, r, http.StatusForbidden, "challenge-failed")
	require.Equal(t, challenge.ReasonInvalid, r.Body["reason"])
	// Not a nonce at all: refused as invalid, not as too easy; one longer
	// than any answer is a bad request (the API description's maxLength).
	r = bot.do(http.MethodPost, room, map[string]any{"challenge": c.Token, "solution": "abc"})
	requireProblem(t, r, http.StatusForbidden, "challenge-failed")
	require.Equal(t, challenge.ReasonInvalid, r.Body["reason"])
	r = bot.do(http.MethodPost, room, map[string]any{"challenge": c.Token, "solution": strings.Repeat("1", 4097)})
	requireProblem(t, r, http.StatusBadRequest, "invalid-field")

	// Another account cannot use this account's solution.
	answer := map[string]any{"challenge": c.Token, "solution": challenge.Solve(c)}
	r = other.do(http.MethodPost, room, answer)
	requireProblem(t, r, http.StatusForbidden, "challenge-failed")
	require.Equal(t, challenge.ReasonWrongSubject, r.Body["reason"])

	// The solution gets a place, once.
	r = bot.do(http.MethodPost, room, answer)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "waiting", r.Body["state"])
	ticket := r.Body["queue_ticket"].(string)
	r = bot.do(http.MethodPost, room, answer)
	requireProblem(t, r, http.StatusForbidden, "challenge-failed")
	require.Equal(t, challenge.ReasonReplayed, r.Body["reason"])

	// Its queue ticket is the proof it passed: joining again with it is
	// not questioned (the web app keeps it as a cookie).
	r = bot.do(http.MethodPost, room, nil, "X-Queue-Ticket", ticket)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "waiting", r.Body["state"])
}

// A clean fan (a browser with the device cookie, no bot label) never sees
// the door, and with CATRACA_CHALLENGE=off nobody does.
func TestCleanJoinPassesAndTheDoorCanBeOff(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"pow", "off"} {
		a := apptest.New(t, 1, withChallenge, func(c *config.Config) { c.ChallengeMode = mode })
		srv := httptest.NewServer(validated(t, a.Handler()))
		t.Cleanup(srv.Close)
		o := organizerFan(t, a, srv)
		venueID := importVenue(t, o, venue.Stadium("Door Arena", "Recife", 20, 10))
		id := createEvent(t, o, venueID, "Door Night", true)
		e, err := a.Events.Get(context.Background(), id)
		require.NoError(t, err)
		_, err = a.Admission().Tick(context.Background(), e)
		require.NoError(t, err)
		room := "/api/events/" + itoa(id) + "/queue"

		ana := newFan(t, srv)
		ana.signUp("ana-" + mode + "@example.com")
		require.Equal(t, "waiting", ana.do(http.MethodPost, room, nil).Body["state"], "%s: a clean join", mode)
		bot, _ := apiFan(t, srv, "bot-"+mode+"@example.com")
		bot.header.Set(risk.BotHeader, "bot")
		r := bot.do(http.MethodPost, room, nil)
		if mode == "off" {
			require.Equal(t, "waiting", r.Body["state"], "CATRACA_CHALLENGE=off: %s", r.Raw)
		} else {
			challengeOf(t, r)
		}
	}
}

// Joins from one device within a minute add up: a new account without
// anything else against it is challenged once its device has joined more
// than the limit (here 2) in the minute.
func TestJoinsFromOneDeviceAddUp(t *testing.T) {
	t.Parallel()
	_, srv, room := doorRoom(t, func(c *config.Config) { c.RiskDeviceJoins = 2 })
	var last response
	phone := risk.DeviceCookie + "=" + fairness.NewDeviceID()
	for i := range 3 {
		// Accounts signed up on one phone: its cookie is their device.
		f, _ := apiFan(t, srv, "farm"+itoa(int64(i))+"@example.com", "Cookie", phone)
		// A new account with an unverified email (2) is looked at closer;
		// the device's third join in the minute is a burst (2), which
		// passes the threshold (3).
		f.header.Set("Cookie", phone)
		last = f.do(http.MethodPost, room, nil)
		if i < 2 {
			require.Equal(t, http.StatusOK, last.Status, "join %d: %s", i+1, last.Raw)
		}
	}
	challengeOf(t, last)
}

// TestVelocityFlagCountsAtTheDoor: a join looked at closer (a new account
// with an unverified email, 2 points) reads the account's velocity flag
// beside the counters, and a flagged account (2 more) must solve the
// challenge; the same account unflagged joins.
func TestVelocityFlagCountsAtTheDoor(t *testing.T) {
	t.Parallel()
	a, srv, room := doorRoom(t, velocity)
	phone := risk.DeviceCookie + "=" + fairness.NewDeviceID()
	fast, fastID := apiFan(t, srv, "fast@example.com", "Cookie", phone)
	calm, _ := apiFan(t, srv, "calm@example.com", "Cookie", phone)
	require.NoError(t, a.Redis.Set(context.Background(), fairness.FlagKey(a.Config.RedisPrefix, fastID), a.Config.VelocityMax+1, time.Hour).Err())
	for _, f := range []*fan{fast, calm} {
		f.header.Set("Cookie", phone)
	}
	require.Equal(t, http.StatusOK, calm.do(http.MethodPost, room, nil).Status, "an unflagged new account joins")
	r := fast.do(http.MethodPost, room, nil)
	challengeOf(t, r)
	require.Contains(t, r.Body["risk"], "velocity")
}
