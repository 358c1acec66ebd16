package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/testenv"
)

// presaleShop is an event whose sale starts in an hour, with a presale
// whose registration is open now and closes in ten minutes, served by an
// app whose presale and room read one clock the test moves.
type presaleShop struct {
	a       *app.App
	srv     *httptest.Server
	org     *fan
	id      int64
	base    time.Time
	offset  atomic.Int64
	presale string
}

func newPresaleShop(t *testing.T, codes int, options ...func(*config.Config)) *presaleShop {
	t.Helper()
	s := &presaleShop{a: apptest.New(t, 1, options...), base: time.Now().UTC()}
	clock := func() time.Time { return time.Now().Add(time.Duration(s.offset.Load())) }
	s.a.Room.SetClock(clock)
	s.a.Presale.Now = clock
	s.srv = serve(t, s.a)
	s.org = organizerFan(t, s.a, s.srv)
	venueID := importVenue(t, s.org, venue.Stadium("Presale Arena", "Recife", 20, 10))
	r := s.org.do(http.MethodPost, "/api/events", map[string]any{
		"venue_id": venueID, "layout_version": 1, "name": "Presale night",
		"starts_at": s.base.Add(72 * time.Hour), "sale_starts_at": s.base.Add(time.Hour), "sale_ends_at": s.base.Add(71 * time.Hour),
		"max_per_hold": 4, "max_per_account": 6,
		"price_levels": []map[string]any{{"code": "A", "price_cents": 9000}, {"code": "B", "price_cents": 7000}, {"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}},
		"waiting_room": map[string]any{"enabled": true, "prequeue_opens_at": s.base.Add(-time.Minute)},
	})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	s.id = int64(r.Body["id"].(float64))
	r = s.org.do(http.MethodPut, "/api/events/"+itoa(s.id)+"/status", map[string]any{"status": "on_sale"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	s.presale = "/api/events/" + itoa(s.id) + "/presale"
	r = s.org.do(http.MethodPut, s.presale, map[string]any{
		"registration_opens_at": s.base.Add(-time.Minute), "registration_closes_at": s.base.Add(10 * time.Minute),
		"codes": codes, "presale_ends_at": s.base.Add(2 * time.Hour)})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	return s
}

// at moves the clock to base + d.
func (s *presaleShop) at(d time.Duration) { s.offset.Store(int64(s.base.Add(d).Sub(time.Now()))) }

func (s *presaleShop) fan(t *testing.T, email string) *fan {
	f := newFan(t, s.srv)
	f.signUp(email)
	return f
}

func TestRegisterOncePerFanWhileOpen(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 2)
	ana := s.fan(t, "ana@example.com")
	reg := s.presale + "/registration"

	r := ana.do(http.MethodGet, reg, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "not_registered", r.Body["state"])

	r = ana.do(http.MethodPost, reg, nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.Equal(t, "registered", r.Body["state"])
	require.Regexp(t, `^r[0-9a-f]{20}$`, r.Body["registration_id"])

	requireRefusal(t, ana.do(http.MethodPost, reg, nil), http.StatusConflict, "already-registered",
		"This account (or an account linked to it) is already registered for this presale: one registration per fan.", "")

	bia := s.fan(t, "bia@example.com")
	s.at(-2 * time.Minute)
	r = bia.do(http.MethodPost, reg, nil)
	requireProblem(t, r, http.StatusConflict, "registration-closed")
	require.Contains(t, r.Body["detail"], "Registration for this presale is open from "+s.base.Add(-time.Minute).Format(time.RFC3339))
	s.at(10 * time.Minute)
	requireProblem(t, bia.do(http.MethodPost, reg, nil), http.StatusConflict, "registration-closed")

	// No presale, or no event.
	requireProblem(t, bia.do(http.MethodPost, "/api/events/999999/presale/registration", nil), http.StatusNotFound, "event-not-found")
	requireProblem(t, call(t, s.srv, http.MethodGet, "/api/events/999999/presale", "", nil), http.StatusNotFound, "event-not-found")
}

func TestConcurrentRegistrationsStayOnePerAccount(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 2)
	const fans, clicks = 6, 8
	created := 0
	for i := range fans {
		f := s.fan(t, fmt.Sprintf("fan%d@example.com", i))
		answers := atOnce(clicks, func() response { return f.do(http.MethodPost, s.presale+"/registration", nil) })
		for _, r := range answers {
			if r.Status == http.StatusCreated {
				created++
				continue
			}
			requireProblem(t, r, http.StatusConflict, "already-registered")
		}
	}
	require.Equal(t, fans, created, "one registration per account, whatever the clicks")
	r := call(t, s.srv, http.MethodGet, s.presale, "", nil)
	require.EqualValues(t, fans, r.Body["registrations"])
}

func TestDrawRevealsTheCommittedSeed(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 3)
	fans := map[string]*fan{}
	for i := range 8 {
		f := s.fan(t, fmt.Sprintf("fan%d@example.com", i))
		r := f.do(http.MethodPost, s.presale+"/registration", nil)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
		fans[r.Body["registration_id"].(string)] = f
	}

	// Before the close: the commitment is public, the seed and the ids
	// are not, and the draw waits.
	r := call(t, s.srv, http.MethodGet, s.presale, "", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "open", r.Body["phase"])
	commitment := r.Body["seed_sha256"].(string)
	require.Regexp(t, `^[0-9a-f]{64}$`, commitment)
	require.NotContains(t, r.Body, "seed")
	// The same situation as the draw's, the same problem type (it said
	// registration-closed while the registration was open).
	requireProblem(t, call(t, s.srv, http.MethodGet, s.presale+"/registrations", "", nil), http.StatusConflict, "registration-open")
	requireProblem(t, s.org.do(http.MethodPost, s.presale+"/draw", nil), http.StatusConflict, "registration-open")
	requireProblem(t, newFan(t, s.srv).do(http.MethodPost, s.presale+"/draw", nil), http.StatusUnauthorized, "unauthenticated")

	s.at(11 * time.Minute)
	answers := atOnce(6, func() response { return s.org.do(http.MethodPost, s.presale+"/draw", nil) })
	seed := ""
	for _, r := range answers {
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "drawn", r.Body["phase"])
		require.EqualValues(t, 3, r.Body["winners"], "concurrent draws make one draw")
		if seed == "" {
			seed = r.Body["seed"].(string)
		}
		require.Equal(t, seed, r.Body["seed"])
	}
	raw, err := hex.DecodeString(seed)
	require.NoError(t, err)
	sum := sha256.Sum256(raw)
	require.Equal(t, commitment, hex.EncodeToString(sum[:]), "the revealed seed is the committed one")

	ids := call(t, s.srv, http.MethodGet, s.presale+"/registrations", "", nil)
	require.Equal(t, http.StatusOK, ids.Status)
	require.Len(t, strings.Fields(string(ids.Raw)), 8)

	won, codes := 0, map[string]bool{}
	for id, f := range fans {
		r := f.do(http.MethodGet, s.presale+"/registration", nil)
		require.Equal(t, id, r.Body["registration_id"])
		switch r.Body["state"] {
		case "won":
			won++
			codes[r.Body["code"].(string)] = true
		case "not_drawn":
			require.Contains(t, r.Body["message"], "general sale's waiting room")
		default:
			t.Fatalf("state after the draw: %v", r.Body["state"])
		}
	}
	require.Equal(t, 3, won)
	require.Len(t, codes, 3, "each winner has a code of their own")
}

func TestPresaleRoomAdmitsCodeHoldersOnly(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 1)
	ana, bia := s.fan(t, "ana@example.com"), s.fan(t, "bia@example.com")
	for _, f := range []*fan{ana, bia} {
		require.Equal(t, http.StatusCreated, f.do(http.MethodPost, s.presale+"/registration", nil).Status)
	}
	s.at(11 * time.Minute)
	require.Equal(t, http.StatusOK, s.org.do(http.MethodPost, s.presale+"/draw", nil).Status)
	winner, loser := ana, bia
	if ana.do(http.MethodGet, s.presale+"/registration", nil).Body["state"] != "won" {
		winner, loser = bia, ana
	}
	code := winner.do(http.MethodGet, s.presale+"/registration", nil).Body["code"].(string)

	e, err := s.a.Events.Get(context.Background(), s.id)
	require.NoError(t, err)
	_, err = s.a.Admission().Tick(context.Background(), e) // publishes the room
	require.NoError(t, err)
	join := "/api/events/" + itoa(s.id) + "/queue"

	// Nobody is in before redeeming, not even the winner.
	for _, f := range []*fan{winner, loser} {
		r := f.do(http.MethodPost, join, nil)
		requireProblem(t, r, http.StatusForbidden, "presale-code-required")
	}
	// The code is the winner's: the loser cannot use it.
	r := loser.do(http.MethodPost, s.presale+"/code", map[string]any{"code": code})
	requireRefusal(t, r, http.StatusForbidden, "presale-code-not-yours", "This presale code was drawn for another account and works only there.", "/code")
	requireProblem(t, loser.do(http.MethodPost, join, nil), http.StatusForbidden, "presale-code-required")
	requireProblem(t, loser.do(http.MethodPost, s.presale+"/code", map[string]any{"code": "0000-0000-0000"}), http.StatusUnprocessableEntity, "invalid-presale-code")

	// A code is read one way however it is typed: case, spaces and dashes
	// do not count (lowercase without dashes was refused, with them taken).
	for _, typed := range []string{strings.ToLower(strings.ReplaceAll(code, "-", "")), " " + strings.ToLower(strings.ReplaceAll(code, "-", " - ")) + " ", code} {
		r = winner.do(http.MethodPost, s.presale+"/code", map[string]any{"code": typed})
		require.Equal(t, http.StatusOK, r.Status, "%q: %s", typed, r.Raw)
		require.Equal(t, true, r.Body["redeemed"])
	}
	r = winner.do(http.MethodPost, join, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "prequeue", r.Body["state"])

	// Once the presale ends, everyone may join, and the winner's page says
	// so instead of sending them to the presale's room with their code.
	s.at(2 * time.Hour)
	for _, f := range []*fan{winner, loser} {
		r = f.do(http.MethodGet, s.presale+"/registration", nil)
		require.Equal(t, true, r.Body["presale_over"], string(r.Raw))
		require.Contains(t, r.Body["message"], "general sale's waiting room", string(r.Raw))
		require.NotContains(t, r.Body["message"], "join the presale's waiting room", string(r.Raw))
	}
	r = loser.do(http.MethodPost, join, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
}

// TestConcurrentDrawsMakeOneDraw races draws of a presale large enough
// for each to take a while: all end with the one draw (same codes).
func TestConcurrentDrawsMakeOneDraw(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 150)
	ctx := context.Background()
	// 400 registrations written directly: signing up that many fans
	// through the API would hash 400 passwords.
	_, err := s.a.Catalog.Exec(ctx, `WITH a AS (
			INSERT INTO accounts (email, password_hash, name)
			SELECT 'bulk' || g || '@example.com', 'x', 'Bulk' FROM generate_series(1, 400) g RETURNING id)
		INSERT INTO presale_registrations (id, event_id, account_id, cluster_id)
		SELECT 'r' || md5(a.id::text), $1, a.id, a.id FROM a`, s.id)
	require.NoError(t, err)
	s.at(11 * time.Minute)
	codes := func() map[string]string {
		rows, err := s.a.Catalog.Query(ctx, `SELECT id, code FROM presale_registrations WHERE event_id = $1 AND won`, s.id)
		require.NoError(t, err)
		out := map[string]string{}
		for rows.Next() {
			var id, code string
			require.NoError(t, rows.Scan(&id, &code))
			out[id] = code
		}
		require.NoError(t, rows.Err())
		return out
	}
	start := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			<-start
			_, err := s.a.Presale.Draw(ctx, s.id)
			errs <- err
		}()
	}
	close(start)
	for range 8 {
		require.NoError(t, <-errs)
	}
	first := codes()
	require.Len(t, first, 150)
	_, err = s.a.Presale.Draw(ctx, s.id)
	require.NoError(t, err)
	require.Equal(t, first, codes(), "a later draw changes nothing")
}

// TestCommandAgreesWithTheServer runs the shipped audit command
// (tools/cmd/presaledraw) against the server's published seed and ids: it
// finds exactly the winners the server gave codes to, and refuses a seed
// that does not match the commitment.
func TestCommandAgreesWithTheServer(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 4)
	ctx := context.Background()
	_, err := s.a.Catalog.Exec(ctx, `WITH a AS (
			INSERT INTO accounts (email, password_hash, name)
			SELECT 'bulk' || g || '@example.com', 'x', 'Bulk' FROM generate_series(1, 25) g RETURNING id)
		INSERT INTO presale_registrations (id, event_id, account_id, cluster_id)
		SELECT 'r' || substr(md5(random()::text), 1, 20), $1, a.id, a.id FROM a`, s.id)
	require.NoError(t, err)
	s.at(11 * time.Minute)
	require.Equal(t, http.StatusOK, s.org.do(http.MethodPost, s.presale+"/draw", nil).Status)

	rows, err := s.a.Catalog.Query(ctx, `SELECT id FROM presale_registrations WHERE event_id = $1 AND won`, s.id)
	require.NoError(t, err)
	var server []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		server = append(server, id)
	}
	require.NoError(t, rows.Err())
	require.Len(t, server, 4)

	command := func(args ...string) (string, error) {
		cmd := exec.Command("go", append([]string{"run", "./tools/cmd/presaledraw"}, args...)...)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := command("-event", s.srv.URL+"/api/events/"+itoa(s.id))
	require.NoError(t, err, out)
	require.ElementsMatch(t, server, strings.Fields(out))

	// The same from the flags, with a seed that is not the committed one.
	pub := call(t, s.srv, http.MethodGet, s.presale, "", nil).Body
	ids := filepath.Join(t.TempDir(), "ids.txt")
	require.NoError(t, os.WriteFile(ids, call(t, s.srv, http.MethodGet, s.presale+"/registrations", "", nil).Raw, 0o600))
	out, err = command("-seed", pub["seed"].(string), "-commitment", pub["seed_sha256"].(string), "-codes", "4", "-ids", ids)
	require.NoError(t, err, out)
	require.ElementsMatch(t, server, strings.Fields(out))
	out, err = command("-seed", strings.Repeat("00", 32), "-commitment", pub["seed_sha256"].(string), "-codes", "4", "-ids", ids)
	require.Error(t, err)
	require.Contains(t, out, "the seed does not match the published commitment")
}

// presaleMails reads the presale mails in a local mailbox, by recipient.
func presaleMails(t *testing.T, mailbox string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(mailbox, "presale-*.txt"))
	require.NoError(t, err)
	mails := map[string]string{}
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		to, _, _ := strings.Cut(strings.TrimPrefix(string(b), "To: "), "\n")
		require.NotContains(t, mails, to, "one mail per fan")
		mails[to] = string(b)
		require.NoError(t, os.Remove(name))
	}
	return mails
}

// TestDrawnFansAreMailedOnceWhoeverDraws: a draw the sweep function runs
// (as its own database role, which reads no address) mails every
// registered fan through the fulfil function's outbox: the winner its
// code, the others that they were not drawn and when the general sale's
// waiting room opens to them. Later sweeps, fulfil runs and the
// organizer's draw call mail nobody again.
func TestDrawnFansAreMailedOnceWhoeverDraws(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mailbox := t.TempDir()
	var cfg config.Config
	s := newPresaleShop(t, 1, func(c *config.Config) { c.Mailbox = mailbox; cfg = *c })
	fns, err := app.OpenFunctions(ctx, cfg, s.a)
	require.NoError(t, err)
	t.Cleanup(fns.Close)
	fns.Presales.Now = s.a.Presale.Now
	fans := map[string]*fan{}
	for _, email := range []string{"ana@example.com", "bia@example.com", "caio@example.com"} {
		fans[email] = s.fan(t, email)
		require.Equal(t, http.StatusCreated, fans[email].do(http.MethodPost, s.presale+"/registration", nil).Status)
	}

	s.at(11 * time.Minute)
	drawn, err := fns.Presales.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, drawn, "the sweep drew the closed presale")
	_, err = fns.Fulfil.Fulfil(ctx)
	require.NoError(t, err)
	mails := presaleMails(t, mailbox)
	require.Len(t, mails, 3, "every registered fan is mailed, winner or not: %v", mails)
	for email, f := range fans {
		mine := f.do(http.MethodGet, s.presale+"/registration", nil).Body
		mail := mails[email]
		if mine["state"] == "won" {
			require.Contains(t, mail, "Subject: Your presale code")
			require.Contains(t, mail, mine["code"].(string))
			continue
		}
		require.Equal(t, "not_drawn", mine["state"])
		require.Contains(t, mail, "not drawn")
		require.Contains(t, mail, "general sale's waiting room opens to everyone at "+s.base.Add(2*time.Hour).Format(time.RFC3339))
		require.Contains(t, mail, "/events/"+itoa(s.id)+"/queue")
	}

	// Whoever runs again, nobody is mailed twice.
	_, err = fns.Presales.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, s.org.do(http.MethodPost, s.presale+"/draw", nil).Status)
	_, err = fns.Fulfil.Fulfil(ctx)
	require.NoError(t, err)
	_, err = s.a.Orders.Fulfil(ctx)
	require.NoError(t, err)
	require.Empty(t, presaleMails(t, mailbox), "mailed once")
}

// TestPresaleAsAFarmTriesIt plays a scalper against the presale: a second
// account on the same phone (linked by the device) may not register
// again, nor use the winner's code before or after the winner redeems
// it; the winner's second redeem changes nothing; a made-up code is
// unknown; a blocked account may not register.
func TestPresaleAsAFarmTriesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newPresaleShop(t, 2)
	reg, join := s.presale+"/registration", "/api/events/"+itoa(s.id)+"/queue"
	ana := s.fan(t, "ana@example.com")
	require.Equal(t, http.StatusCreated, ana.do(http.MethodPost, reg, nil).Status)

	// A second account on Ana's phone is Ana's cluster: one registration.
	alt := newFan(t, s.srv)
	alt.onDevice(ana.device())
	alt.signUp("ana.alt@example.com")
	requireRefusal(t, alt.do(http.MethodPost, reg, nil), http.StatusConflict, "already-registered",
		"This account (or an account linked to it) is already registered for this presale: one registration per fan.", "")

	// A blocked account is refused before it can take a registration.
	bad := newFan(t, s.srv)
	badID := bad.signUp("blocked@example.com")
	require.NoError(t, s.a.Fairness.Block(ctx, 1, badID, "farm account", nil))
	requireProblem(t, bad.do(http.MethodPost, reg, nil), http.StatusForbidden, "account-blocked")

	s.at(11 * time.Minute)
	r := s.org.do(http.MethodPost, s.presale+"/draw", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.EqualValues(t, 1, r.Body["registrations"], "the linked and the blocked accounts have none")
	code := ana.do(http.MethodGet, reg, nil).Body["code"].(string)

	e, err := s.a.Events.Get(ctx, s.id)
	require.NoError(t, err)
	_, err = s.a.Admission().Tick(ctx, e)
	require.NoError(t, err)
	notYours := func() {
		t.Helper()
		requireRefusal(t, alt.do(http.MethodPost, s.presale+"/code", map[string]any{"code": code}), http.StatusForbidden,
			"presale-code-not-yours", "This presale code was drawn for another account and works only there.", "/code")
		requireProblem(t, alt.do(http.MethodPost, join, nil), http.StatusForbidden, "presale-code-required")
	}
	notYours()
	for range 2 {
		r := ana.do(http.MethodPost, s.presale+"/code", map[string]any{"code": code})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}
	require.EqualValues(t, 1, call(t, s.srv, http.MethodGet, s.presale, "", nil).Body["redeemed"], "redeemed once")
	notYours() // a spent code is still not another account's
	requireProblem(t, alt.do(http.MethodPost, s.presale+"/code", map[string]any{"code": "ZZZZ-ZZZZ-ZZZZ"}), http.StatusUnprocessableEntity, "invalid-presale-code")
	require.Equal(t, http.StatusOK, ana.do(http.MethodPost, join, nil).Status)
}

// TestEventChangesKeepAnOpenPresale: once a presale is opened, the event's
// edits that would undo its rules are refused, naming the presale (the
// outsider moved the sale's start before the registration closed, its end
// before the presale's, and turned the waiting room off, which let a fan
// without a code hold seats during the presale). Other edits pass.
func TestEventChangesKeepAnOpenPresale(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 2)
	path := "/api/events/" + itoa(s.id)
	for _, c := range []struct {
		method, path string
		body         map[string]any
		pointer      string
	}{
		{http.MethodPatch, path, map[string]any{"sale_starts_at": s.base.Add(5 * time.Minute)}, "/sale_starts_at"},
		{http.MethodPatch, path, map[string]any{"sale_ends_at": s.base.Add(90 * time.Minute)}, "/sale_ends_at"},
		{http.MethodPatch, path, map[string]any{"waiting_room": map[string]any{"enabled": false}}, "/waiting_room/enabled"},
		{http.MethodPut, path + "/waiting-room", map[string]any{"enabled": false}, "/waiting_room/enabled"},
	} {
		r := s.org.do(c.method, c.path, c.body)
		requireProblem(t, r, http.StatusConflict, "presale-conflict")
		require.Contains(t, r.Body["detail"], "verified-fan presale", "%s %v", c.method, c.body)
		require.Contains(t, string(r.Raw), `"pointer":"`+c.pointer+`"`, "%s %v", c.method, c.body)
	}
	e := s.org.do(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, e.Status, string(e.Raw))
	require.Equal(t, true, e.Body["waiting_room"].(map[string]any)["enabled"], "nothing changed")

	// Edits that keep the presale's rules pass.
	r := s.org.do(http.MethodPatch, path, map[string]any{"name": "Presale night, moved", "sale_starts_at": s.base.Add(30 * time.Minute)})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = s.org.do(http.MethodPut, path+"/waiting-room", map[string]any{"enabled": true, "ceiling": 50})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
}

// TestClosingTheSaleDuringAPresale: the console's "Close sale" (the
// sale's end set to now) stays possible while a presale sells, though the
// sale then ends before the presale would have; an end later than now but
// before the presale's is still refused.
func TestClosingTheSaleDuringAPresale(t *testing.T) {
	t.Parallel()
	s := newPresaleShop(t, 2)
	ctx := context.Background()
	before, err := event.Read(ctx, s.a.Catalog, s.id)
	require.NoError(t, err)
	now := s.base.Add(90 * time.Minute) // the sale started, the presale sells until base + 2h
	after := before
	for end, closes := range map[time.Duration]bool{0: true, 30 * time.Second: true, 10 * time.Minute: false} {
		after.SaleEndsAt = now.Add(end)
		err := presale.Keeps(ctx, s.a.Catalog, before, after, now)
		if closes {
			require.NoError(t, err, "the sale closed %s from now", end)
		} else {
			require.ErrorIs(t, err, presale.ErrEventConflict, "the sale ending %s from now, before the presale", end)
		}
	}
}

// TestPresaleGatesHoldsWithoutTheRoom: during a presale, a hold from an
// account that redeemed no code is refused even when the event's room
// does not gate holds (the gate is the room's presale setting, read by the
// hold's one Redis script); a redeemer's hold passes.
func TestPresaleGatesHoldsWithoutTheRoom(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	anaID := ana.signUp("ana@example.com")
	bia := newFan(t, s.srv)
	bia.signUp("bia@example.com")
	ctx := context.Background()
	// As a presale whose room was turned off would leave it.
	require.NoError(t, s.app.Room.SetPresale(ctx, s.eventID, time.Now().Add(time.Hour), anaID))
	holds := "/api/events/" + itoa(s.eventID) + "/holds"
	r := bia.do(http.MethodPost, holds, map[string]any{"best": map[string]any{"quantity": 2}}, "Idempotency-Key", "b1")
	requireProblem(t, r, http.StatusForbidden, "presale-code-required")
	r = ana.do(http.MethodPost, holds, map[string]any{"best": map[string]any{"quantity": 2}}, "Idempotency-Key", "a1")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
}
