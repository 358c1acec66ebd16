package api_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// catalog seeds venues and events for the read-path tests.
func catalog(t testing.TB, a *app.App) (rio, sp venue.Layout, ids map[string]int64) {
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	var err error
	rio, err = org.ImportLayout(ctx, 0, venue.Stadium("Estádio do Maracanã", "Rio de Janeiro", 200, 20))
	require.NoError(t, err)
	sp, err = org.ImportLayout(ctx, 0, venue.Stadium("Allianz Parque", "São Paulo", 200, 20))
	require.NoError(t, err)
	now := time.Now().UTC().Truncate(time.Second)
	day := 24 * time.Hour
	prices := []event.PriceLevel{{Code: "A", PriceCents: 100}, {Code: "B", PriceCents: 100}, {Code: "C", PriceCents: 100}, {Code: "GA", PriceCents: 100}}
	ids = map[string]int64{}
	for i, s := range []struct {
		name, category string
		l              venue.Layout
		in             time.Duration
		onSale         bool
	}{
		{"Aurora Tour", "music", rio, 30 * day, true},
		{"Flamengo x Fluminense", "sports", rio, 10 * day, true},
		{"Symphony under the stars", "classical", sp, 20 * day, false},
		{"Aurora Tour São Paulo", "music", sp, 31 * day, true},
		{"Stand-up Night", "comedy", sp, 5 * day, true},
		{"Jazz na Praça", "music", rio, 40 * day, false},
		{"Past Festival", "music", rio, -3 * day, false},
	} {
		spec := organizer.EventSpec{VenueID: s.l.VenueID, LayoutVersion: s.l.Version, Name: s.name, Category: s.category,
			StartsAt: now.Add(s.in), SaleStartsAt: now.Add(s.in - 60*day), SaleEndsAt: now.Add(s.in), PriceLevels: prices,
			Description: fmt.Sprintf("event %d", i)}
		if !s.onSale {
			spec.SaleStartsAt = now.Add(s.in - 2*day)
			if s.in < 0 {
				spec.SaleStartsAt = now.Add(s.in - 60*day)
			}
		}
		past := spec
		if s.in < 0 { // created ahead, as an organizer must, then let time pass
			spec.StartsAt, spec.SaleStartsAt, spec.SaleEndsAt = spec.StartsAt.Add(-s.in+day), spec.SaleStartsAt.Add(-s.in+day), spec.SaleEndsAt.Add(-s.in+day)
		}
		e, err := org.CreateEvent(ctx, 0, spec)
		require.NoError(t, err)
		if s.in < 0 {
			_, err = a.Catalog.Exec(ctx, `UPDATE events SET starts_at = $2, sale_starts_at = $3, sale_ends_at = $4, updated_at = now() WHERE id = $1`,
				e.ID, past.StartsAt, past.SaleStartsAt, past.SaleEndsAt)
			require.NoError(t, err)
		}
		if s.onSale {
			require.NoError(t, org.SetStatus(ctx, e.ID, "on_sale"))
		}
		ids[s.name] = e.ID
	}
	return rio, sp, ids
}

func names(r response) []string {
	var out []string
	for _, e := range r.Body["events"].([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

func TestListingAndSearch(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 2)
	srv := serve(t, a)
	catalog(t, a)
	f := newFan(t, srv)
	get := func(q string) []string {
		r := f.do(http.MethodGet, "/api/events?"+q, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return names(r)
	}
	require.Equal(t, []string{"Stand-up Night", "Symphony under the stars", "Aurora Tour São Paulo"}, get("city=sao%20paulo"),
		"city filter ignores accents and case, ordered by date")
	require.Equal(t, []string{"Aurora Tour", "Aurora Tour São Paulo", "Jazz na Praça"}, get("category=music&from="+time.Now().Format("2006-01-02")))
	require.Equal(t, []string{"Stand-up Night", "Flamengo x Fluminense", "Aurora Tour", "Aurora Tour São Paulo"}, get("on_sale=true"))
	to := time.Now().Add(15 * 24 * time.Hour).UTC().Format(time.RFC3339)
	require.Equal(t, []string{"Past Festival", "Stand-up Night", "Flamengo x Fluminense"}, get("to="+to))

	// Pagination walks every event once, in a stable order.
	var all []string
	cursor := ""
	for page := 0; page < 10; page++ {
		r := f.do(http.MethodGet, "/api/events?limit=2&cursor="+cursor, nil)
		require.Equal(t, http.StatusOK, r.Status)
		all = append(all, names(r)...)
		next, _ := r.Body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Len(t, all, 7)
	require.Equal(t, "Past Festival", all[0])
	requireProblem(t, f.do(http.MethodGet, "/api/events?cursor=garbage!", nil), http.StatusBadRequest, "invalid-cursor")
	requireProblem(t, f.do(http.MethodGet, "/api/events?from=yesterday", nil), http.StatusBadRequest, "invalid-parameter")
	requireProblem(t, f.do(http.MethodGet, "/api/events?limit=500", nil), http.StatusBadRequest, "invalid-parameter")

	// Search: accents, typos, venue names, both languages.
	require.Contains(t, get("q=maracana"), "Flamengo x Fluminense", "maracana finds the Maracanã's events")
	require.Contains(t, get("q=maracna"), "Aurora Tour", "a typo still finds it")
	require.Equal(t, "Jazz na Praça", get("q=jazz%20praca")[0])
	require.Equal(t, "Symphony under the stars", get("q=simphony")[0], "typo in an English name")
	require.Equal(t, "Aurora Tour São Paulo", get("q=aurora%20sao%20paulo")[0], "ranked: the better match first")
	require.Empty(t, get("q=xyzzyqq"))
	require.Equal(t, []string{"Aurora Tour São Paulo"}, get("q=aurora&city=S%C3%A3o%20Paulo"), "search combines with filters")
	searchRelevanceByKind(t, f)
}

func TestAvailabilitySnapshotFollowsHolds(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	rio, _, ids := catalog(t, a)
	id := ids["Aurora Tour"]
	f := newFan(t, srv)
	f.signUp("watcher@example.com")
	seats := seatIDs(t, a, rio.VenueID)

	bit := func(r response, index int) bool {
		b, err := base64.StdEncoding.DecodeString(r.Body["available"].(string))
		require.NoError(t, err)
		return b[index/8]&(1<<(index%8)) != 0
	}
	url := "/api/events/" + itoa(id) + "/availability"
	r := f.do(http.MethodGet, url, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.True(t, bit(r, 0))
	require.EqualValues(t, rio.SeatCount(), r.Body["seat_count"])
	require.EqualValues(t, 20, r.Body["ga"].(map[string]any)["FLOOR"].(map[string]any)["remaining"])
	etag := r.Header.Get("ETag")
	require.NotEmpty(t, etag)
	require.Equal(t, http.StatusNotModified, f.do(http.MethodGet, url, nil, "If-None-Match", etag).Status)

	h := f.do(http.MethodPost, "/api/events/"+itoa(id)+"/holds", map[string]any{"seats": seats[:2]}, "Idempotency-Key", "s1")
	require.Equal(t, http.StatusCreated, h.Status, string(h.Raw))
	g := f.do(http.MethodPost, "/api/events/"+itoa(id)+"/holds", map[string]any{"pool": "FLOOR", "quantity": 3}, "Idempotency-Key", "s2")
	require.Equal(t, http.StatusCreated, g.Status, string(g.Raw))
	waitUntil(t, 10*time.Second, func() bool {
		r := f.do(http.MethodGet, url, nil)
		return !bit(r, 0) && !bit(r, 1) && r.Body["ga"].(map[string]any)["FLOOR"].(map[string]any)["remaining"] == float64(17)
	}, "the snapshot shows the hold within its interval")

	rel := f.do(http.MethodDelete, "/api/holds/"+itoa(int64(h.Body["hold_id"].(float64))), nil)
	require.Equal(t, http.StatusOK, rel.Status)
	waitUntil(t, 10*time.Second, func() bool { return bit(f.do(http.MethodGet, url, nil), 0) }, "and the release")
}

// sse reads events from a stream until n "change" events arrived; it
// closes subscribed, if given, once the server has subscribed (the headers
// come after the subscription).
func sse(t testing.TB, srv *httptest.Server, path, lastID string, n int, subscribed chan<- struct{}) (ids []string, data []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	if subscribed != nil {
		close(subscribed)
	}
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	sc := bufio.NewScanner(res.Body)
	var id string
	for sc.Scan() && len(ids) < n {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: ") && id != "":
			ids, data = append(ids, id), append(data, strings.TrimPrefix(line, "data: "))
			id = ""
		}
	}
	return ids, data
}

// watched is an on-sale event with a signed-up fan, for stream tests.
type watched struct {
	app   *app.App
	srv   *httptest.Server
	id    int64
	seats []int64
	fan   *fan
}

func newWatched(t *testing.T) watched {
	a := apptest.New(t, 1)
	srv := serve(t, a)
	rio, _, ids := catalog(t, a)
	w := watched{app: a, srv: srv, id: ids["Aurora Tour"], seats: seatIDs(t, a, rio.VenueID), fan: newFan(t, srv)}
	w.fan.signUp("live@example.com")
	return w
}

func TestStreamDeliversHoldsAndResumes(t *testing.T) {
	t.Parallel()
	w := newWatched(t)
	srv, id, seats, f := w.srv, w.id, w.seats, w.fan
	path := "/api/events/" + itoa(id) + "/stream"
	hold := func(key string, s []int64) {
		r := f.do(http.MethodPost, "/api/events/"+itoa(id)+"/holds", map[string]any{"seats": s}, "Idempotency-Key", key)
		require.Equal(t, http.StatusCreated, r.Status)
	}

	got, subscribed := make(chan []string, 1), make(chan struct{})
	go func() {
		evIDs, data := sse(t, srv, path, "", 1, subscribed)
		got <- append(evIDs, data...)
	}()
	<-subscribed
	hold("h1", seats[:2])
	first := <-got
	require.Len(t, first, 2)
	require.Contains(t, first[1], `"state":"held"`)
	require.Contains(t, first[1], `"seats":[0,1]`)

	// Two more changes while disconnected; a reconnect with Last-Event-ID gets both.
	hold("h2", seats[2:3])
	hold("h3", seats[3:4])
	// Changes still being published arrive live: the stream subscribes
	// before it replays.
	// The two publications run in the background after each response, so
	// under load they may reach the stream in either order (they are
	// different seats: the order carries nothing).
	evIDs, data := sse(t, srv, path, first[0], 2, nil)
	require.Len(t, evIDs, 2)
	var seatsSeen []string
	for _, d := range data {
		var delta struct {
			Seats []int  `json:"seats"`
			State string `json:"state"`
		}
		require.NoError(t, json.Unmarshal([]byte(d), &delta), d)
		require.Equal(t, "held", delta.State, d)
		seatsSeen = append(seatsSeen, fmt.Sprint(delta.Seats))
	}
	require.ElementsMatch(t, []string{"[2]", "[3]"}, seatsSeen)
}

// TestReadCacheHeaders pins the caching headers of every read endpoint.
func TestReadCacheHeaders(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	rio, _, ids := catalog(t, a)
	f := newFan(t, srv)
	f.signUp("headers@example.com")
	paths := []struct{ name, path string }{
		{"events list", "/api/events"},
		{"event detail", "/api/events/" + itoa(ids["Aurora Tour"])},
		{"event detail (past)", "/api/events/" + itoa(ids["Past Festival"])},
		{"layout", fmt.Sprintf("/api/venues/%d/layouts/%d", rio.VenueID, rio.Version)},
		{"availability", "/api/events/" + itoa(ids["Aurora Tour"]) + "/availability"},
		{"availability (past)", "/api/events/" + itoa(ids["Past Festival"]) + "/availability"},
		{"queue progress", "/api/events/" + itoa(ids["Aurora Tour"]) + "/queue/progress"},
		{"queue status", "/api/events/" + itoa(ids["Aurora Tour"]) + "/queue"},
		{"presale (none)", "/api/events/" + itoa(ids["Aurora Tour"]) + "/presale"},
		{"health", "/healthz"},
	}
	var b strings.Builder
	for _, p := range paths {
		r := f.do(http.MethodGet, p.path, nil)
		require.Less(t, r.Status, 500, p.name)
		fmt.Fprintf(&b, "%-22s %d Cache-Control: %s\n", p.name, r.Status, r.Header.Get("Cache-Control"))
	}
	golden := filepath.Join("testdata", "headers.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./shared/api -run TestReadCacheHeaders -update")
	require.Equal(t, string(want), b.String())
}

func TestStreamPushesSweptHolds(t *testing.T) {
	t.Parallel()
	w := newWatched(t)
	a, srv, id, seats, f := w.app, w.srv, w.id, w.seats, w.fan
	r := f.do(http.MethodPost, "/api/events/"+itoa(id)+"/holds", map[string]any{"seats": seats[4:6]}, "Idempotency-Key", "s")
	require.Equal(t, http.StatusCreated, r.Status)
	pool, _ := a.Shards.Pool(1)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `UPDATE holds SET expires_at = now() - interval '1 second'`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE event_seats SET held_until = now() - interval '1 second' WHERE status = 'held'`)
	require.NoError(t, err)

	got, subscribed := make(chan []string, 1), make(chan struct{})
	go func() {
		_, data := sse(t, srv, "/api/events/"+itoa(id)+"/stream", "", 1, subscribed)
		got <- data
	}()
	<-subscribed
	_, err = a.Inventory.SweepAll(ctx, 100)
	require.NoError(t, err)
	data := <-got
	require.Len(t, data, 1)
	require.Contains(t, data[0], `"state":"available"`)
	require.Contains(t, data[0], `"seats":[4,5]`)
}

// TestSearchRelevanceByKindFromIndex runs the relevance pins against the
// in-memory search index (production's path) rather than PostgreSQL.
func TestSearchRelevanceByKindFromIndex(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1, func(c *config.Config) { c.SearchIndex = true })
	srv := serve(t, a)
	catalog(t, a)
	require.NoError(t, a.SearchIndex.Refresh(context.Background()))
	require.True(t, a.SearchIndex.Ready())
	searchRelevanceByKind(t, newFan(t, srv))
}

// searchRelevanceByKind pins the top result for each kind of query the
// search benchmark mixes (issue 18): results stay as good as they were fast.
func searchRelevanceByKind(t *testing.T, f *fan) {
	search := func(q string) []string {
		r := f.do(http.MethodGet, "/api/events?q="+url.QueryEscape(q), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		return names(r)
	}
	for _, c := range []struct{ kind, query, top string }{
		{"exact name", "Jazz na Praça", "Jazz na Praça"},
		{"exact name", "Flamengo x Fluminense", "Flamengo x Fluminense"},
		{"prefix as typed", "symph", "Symphony under the stars"},
		{"prefix as typed", "flamengo x flu", "Flamengo x Fluminense"},
		{"typo", "simphony", "Symphony under the stars"},
		{"typo", "stand-up nigth", "Stand-up Night"},
		{"accents dropped", "jazz na praca", "Jazz na Praça"},
		{"accents added", "áurora tóur são paulo", "Aurora Tour São Paulo"},
		{"name before venue", "aurora", "Aurora Tour"},
	} {
		got := search(c.query)
		require.NotEmpty(t, got, "%s: %q found nothing", c.kind, c.query)
		require.Equal(t, c.top, got[0], "%s: %q", c.kind, c.query)
	}
	require.Contains(t, search("maracana"), "Flamengo x Fluminense", "a venue's name finds its events")
	r := f.do(http.MethodGet, "/api/events?q=aurora&city="+url.QueryEscape("sao paulo"), nil)
	require.Equal(t, []string{"Aurora Tour São Paulo"}, names(r), "city filter")
	require.Empty(t, search("xyzzyqq"), "no match")
	require.Empty(t, search("aurora xyzzyqq"), "one word that matches nothing: no match")
	require.Empty(t, search("!!!"), "nothing searchable")
}

// TestServersKeepTheirOwnGzip: two servers on different data serve the
// same ETag for their venue 1; each must send its own bytes compressed
// (a memo shared by every server sent the first one's layout to both).
func TestServersKeepTheirOwnGzip(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Alpha Hall", "Beta Hall"} {
		a := apptest.New(t, 1)
		srv := serve(t, a)
		o := organizerFan(t, a, srv)
		venueID := importVenue(t, o, venue.Stadium(name, "Recife", 20, 5))
		r := o.do(http.MethodGet, "/api/venues/"+itoa(venueID)+"/layouts/1", nil, "Accept-Encoding", "gzip")
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "gzip", r.Header.Get("Content-Encoding"))
		zr, err := gzip.NewReader(bytes.NewReader(r.Raw))
		require.NoError(t, err)
		body, err := io.ReadAll(zr)
		require.NoError(t, err)
		require.True(t, bytes.Contains(body, []byte(`"name":"`+name+`"`)), "venue %d of this server (ETag %s) is %s, got %.60s…",
			venueID, r.Header.Get("ETag"), name, body)
	}
}

// HEAD of the stream answers its headers and ends: the handler streamed on
// for up to 5 minutes into a body HEAD does not send, holding a live
// subscription, and the client's next request on that connection waited
// for it.
func TestStreamHeadEnds(t *testing.T) {
	t.Parallel()
	w := newWatched(t)
	path := "/api/events/" + itoa(w.id)
	client := &http.Client{Timeout: 5 * time.Second}
	for range 2 { // the second HEAD reuses the first's connection
		req, err := http.NewRequest(http.MethodHead, w.srv.URL+path+"/stream", nil)
		require.NoError(t, err)
		res, err := client.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	}
	res, err := client.Get(w.srv.URL + path)
	require.NoError(t, err, "a request after HEAD on the same connection")
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}
