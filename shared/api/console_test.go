package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/pspsim"
)

// cast is two organizers and a fan of a fresh app.
func cast(t *testing.T) (srv *httptest.Server, ana, bob, fan *fan) {
	a := apptest.New(t, 1)
	srv = serve(t, a)
	ana, bob = organizerNamed(t, a, srv, "ana@example.com"), organizerNamed(t, a, srv, "bob@example.com")
	fan = newFan(t, srv)
	fan.signUp("fan@example.com")
	return srv, ana, bob, fan
}

// The organizer console's lists show each organizer their own venues,
// versions and events only; fans are refused.
func TestConsoleListsAreScopedToTheOrganizer(t *testing.T) {
	t.Parallel()
	srv, ana, bob, fan := cast(t)
	anaVenue := importVenue(t, ana, venue.Stadium("Ana Lists Arena", "Recife", 20, 5))
	require.Equal(t, http.StatusCreated, ana.do(http.MethodPost, "/api/venues/"+itoa(anaVenue)+"/layouts", venue.Stadium("Ana Lists Arena", "Recife", 30, 5)).Status)
	anaEvent := createEvent(t, ana, anaVenue, "Ana Lists Show", false)

	r := ana.do(http.MethodGet, "/api/venues", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	venues := r.Body["venues"].([]any)
	require.Len(t, venues, 1)
	v := venues[0].(map[string]any)
	require.EqualValues(t, anaVenue, v["id"])
	require.Len(t, v["versions"], 2)
	require.EqualValues(t, 2, v["versions"].([]any)[0].(map[string]any)["version"], "newest version first")

	r = ana.do(http.MethodGet, "/api/venues/"+itoa(anaVenue)+"/layouts", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["versions"], 2)

	r = ana.do(http.MethodGet, "/api/organizer/events", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["events"], 1)
	require.EqualValues(t, anaEvent, r.Body["events"].([]any)[0].(map[string]any)["id"])

	// Bob sees nothing of Ana's.
	r = bob.do(http.MethodGet, "/api/venues", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Empty(t, r.Body["venues"])
	requireProblem(t, bob.do(http.MethodGet, "/api/venues/"+itoa(anaVenue)+"/layouts", nil), http.StatusNotFound, "venue-not-found")
	r = bob.do(http.MethodGet, "/api/organizer/events", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Empty(t, r.Body["events"])

	for _, path := range []string{"/api/venues", "/api/venues/" + itoa(anaVenue) + "/layouts", "/api/organizer/events"} {
		requireProblem(t, fan.do(http.MethodGet, path, nil), http.StatusForbidden, "organizer-only")
		requireProblem(t, newFan(t, srv).do(http.MethodGet, path, nil), http.StatusUnauthorized, "unauthenticated")
	}
}

// postCSV sends a seat list as text/csv with f's session.
func postCSV(t *testing.T, f *fan, path, body string) response {
	t.Helper()
	return f.send(http.MethodPost, path, "text/csv; charset=utf-8", body)
}

const seatList = "section,row,seat,x,y,price_level\n101,A,1,10,10,A\n101,A,2,15,10,A\n102,A,1,40,10,B\n"

// A venue imports its seat list as CSV: a dry run previews the map, bad
// lines come back one by one with their numbers, and versions follow.
func TestImportLayoutFromCSV(t *testing.T) {
	t.Parallel()
	_, ana, bob, fan := cast(t)

	r := postCSV(t, ana, "/api/venues?name=Teatro&city=Recife&dry_run=true", seatList)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Len(t, r.Body["sections"], 2, "the preview is the map the seat map draws")
	r = ana.do(http.MethodGet, "/api/venues", nil)
	require.Empty(t, r.Body["venues"], "a dry run stores nothing")

	bad := strings.Replace(seatList, "101,A,2,15,10,A", "101,A,two,15,10,A", 1) + "102,A,1,45,10,B\n"
	r = postCSV(t, ana, "/api/venues?name=Teatro&city=Recife", bad)
	requireProblem(t, r, http.StatusBadRequest, "invalid-layout")
	require.Contains(t, r.Body["detail"], "Line 3: seat must be a whole number")
	require.Equal(t, []any{
		map[string]any{"line": 3.0, "field": "seat", "detail": `seat must be a whole number from 0 to 2147483647, not "two"`},
		map[string]any{"line": 5.0, "field": "seat", "detail": "section 102 row A seat 1 is already on line 4"},
	}, r.Body["errors"])
	requireProblem(t, postCSV(t, ana, "/api/venues?city=Recife", seatList), http.StatusBadRequest, "invalid-layout")

	// A section of a row a line, past what a section holds, is refused
	// where it passes it (a dry run too), and nothing after is read.
	var rows strings.Builder
	rows.WriteString("section,row,seat,x,y,price_level\n")
	for i := range config.LayoutMaxSectionRows + 100 {
		fmt.Fprintf(&rows, "S,R%d,1,%d,%d,A\n", i, i%1000, i/1000)
	}
	for _, dry := range []string{"true", "false"} {
		r = postCSV(t, ana, "/api/venues?name=Teatro&city=Recife&dry_run="+dry, rows.String())
		requireProblem(t, r, http.StatusBadRequest, "invalid-layout")
		require.Contains(t, r.Body["detail"], "Line 502: section S already has 500 rows, the most a section holds")
		require.Len(t, r.Body["errors"], 1)
	}
	requireProblem(t, postCSV(t, ana, "/api/venues?name=T&city=R&dry_run=maybe", seatList), http.StatusBadRequest, "invalid-parameter")

	r = postCSV(t, ana, "/api/venues?name=Teatro&city=Recife", seatList)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, 3, r.Body["seat_count"])
	id := itoa(int64(r.Body["venue_id"].(float64)))
	r = postCSV(t, ana, "/api/venues/"+id+"/layouts", seatList+"102,A,2,45,10,B\n")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, 2, r.Body["version"])

	requireProblem(t, postCSV(t, bob, "/api/venues/"+id+"/layouts", seatList), http.StatusNotFound, "venue-not-found")
	requireProblem(t, postCSV(t, fan, "/api/venues?name=T&city=R", seatList), http.StatusForbidden, "organizer-only")
	requireProblem(t, postCSV(t, ana, "/api/venues?name=T&city=R", "101,A,1,10,10,A\x00\n"), http.StatusBadRequest, "invalid-text")

	// JSON layouts preview too.
	r = ana.do(http.MethodPost, "/api/venues?dry_run=true", venue.Stadium("Preview Arena", "Recife", 20, 5))
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.NotEmpty(t, r.Body["sections"])
}

// Cancelling an event refunds every paid order through the outbox and the
// PSP; the progress is an API read, and cancelling again refunds nothing
// twice.
func TestCancelRefundsEveryPaidOrder(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana, anaOrder, _ := s.paidOrder(t, "ana-cancel@example.com", s.seats[:2]...)
	bia, biaOrder, _ := s.paidOrder(t, "bia-cancel@example.com", s.seats[2])
	cai := newFan(t, s.srv)
	cai.signUp("cai-cancel@example.com")
	_, pending := s.hold(t, cai, "h", s.seats[5])
	inFlight := s.checkout(t, cai, pending) // cai is at the PSP's page when the event is cancelled

	org := newFan(t, s.srv)
	require.Equal(t, http.StatusOK, org.do(http.MethodPost, "/api/session", map[string]any{"email": "org@example.com", "password": "a long enough password"}).Status)
	other := organizerNamed(t, s.app, s.srv, "other-cancel@example.com")
	refunds := "/api/events/" + itoa(s.eventID) + "/refunds"
	status := "/api/events/" + itoa(s.eventID) + "/status"

	r := org.do(http.MethodGet, refunds, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"total": 2.0, "refunded": 0.0, "failed": 0.0, "remaining": 2.0}, r.Body, "paid orders, nothing asked yet")

	for range 2 {
		r = org.do(http.MethodPut, status, map[string]any{"status": "cancelled"})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "cancelled", r.Body["status"])
	}
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM outbox WHERE topic = 'refund.requested'`), "one refund per paid order, however often cancelled")
	waitUntil(t, 20*time.Second, func() bool {
		return org.do(http.MethodGet, refunds, nil).Body["refunded"] == 2.0
	}, "both orders refunded")
	require.Equal(t, map[string]any{"total": 2.0, "refunded": 2.0, "failed": 0.0, "remaining": 0.0}, org.do(http.MethodGet, refunds, nil).Body)
	for _, c := range []struct {
		f  *fan
		id int64
	}{{ana, anaOrder}, {bia, biaOrder}} {
		o := s.orderStatus(t, c.f, c.id).Body
		require.Equal(t, "refunded", o["status"])
		for _, tk := range o["tickets"].([]any) {
			require.Equal(t, true, tk.(map[string]any)["void"])
		}
	}
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM orders WHERE id = $1 AND status = 'pending'`, pending), "an unpaid order has nothing to refund")
	// cai pays after the cancellation: the money goes back, no ticket is sold.
	_, err := s.sim.Pay(inFlight.ID, pspsim.CardSuccess)
	require.NoError(t, err)
	waitUntil(t, 20*time.Second, func() bool { return s.givenBack(inFlight.ID) }, "the late payment given back")
	require.NotEqual(t, "paid", s.orderStatus(t, cai, pending).Body["status"])

	requireProblem(t, org.do(http.MethodPut, status, map[string]any{"status": "on_sale"}), http.StatusBadRequest, "invalid-event")
	requireProblem(t, other.do(http.MethodGet, refunds, nil), http.StatusNotFound, "event-not-found")
	requireProblem(t, ana.do(http.MethodGet, refunds, nil), http.StatusForbidden, "organizer-only")
	s.requireMoneyConserved(t)
	require.Zero(t, s.errors5xx.Load())
}

// An organizer creates a draft (unlisted), edits it, publishes it and
// opens its sale; another organizer sees none of it and fans are refused.
func TestEditAndPublishAnEvent(t *testing.T) {
	t.Parallel()
	srv, ana, bob, fan := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Edit Arena", "Recife", 20, 5))
	now := time.Now().UTC().Truncate(time.Second)
	r := ana.do(http.MethodPost, "/api/events", map[string]any{
		"venue_id": venueID, "layout_version": 1, "name": "Draft Night", "draft": true, "city": "Olinda",
		"starts_at": now.Add(72 * time.Hour), "sale_starts_at": now.Add(-time.Hour), "sale_ends_at": now.Add(71 * time.Hour),
		"price_levels": []map[string]any{{"code": "A", "price_cents": 9000, "color": "#1f6feb"}, {"code": "B", "price_cents": 7000},
			{"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}},
	})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.Equal(t, "draft", r.Body["status"])
	require.Equal(t, "Olinda", r.Body["city"])
	id := itoa(int64(r.Body["id"].(float64)))
	requireProblem(t, call(t, srv, http.MethodGet, "/api/events/"+id, "", nil), http.StatusNotFound, "event-not-found")

	r = ana.do(http.MethodGet, "/api/organizer/events/"+id, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "#1f6feb", r.Body["price_levels"].([]any)[0].(map[string]any)["color"])

	r = ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{"name": "Edited Night", "max_per_account": 4, "max_per_hold": 4, "hold_ttl_seconds": 300,
		"waiting_room": map[string]any{"enabled": true, "ceiling": 50, "prequeue_opens_at": now.Add(-2 * time.Hour)},
		"price_levels": []map[string]any{{"code": "B", "price_cents": 7500, "color": "#8250df"}}})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "Edited Night", r.Body["name"])
	require.Equal(t, "Olinda", r.Body["city"], "fields left out keep their value")
	require.EqualValues(t, 4, r.Body["max_per_account"])
	require.EqualValues(t, 300, r.Body["hold_ttl_seconds"])
	require.Equal(t, map[string]any{"enabled": true, "ceiling": 50.0, "prequeue_opens_at": now.Add(-2 * time.Hour).Format(time.RFC3339),
		"active_ttl_seconds": 600.0, "admission_ttl_seconds": 900.0, "paused": false}, r.Body["waiting_room"])
	levels := map[string]any{}
	for _, l := range r.Body["price_levels"].([]any) {
		levels[l.(map[string]any)["code"].(string)] = l
	}
	require.EqualValues(t, 7500, levels["B"].(map[string]any)["price_cents"])
	require.Equal(t, "#8250df", levels["B"].(map[string]any)["color"])

	for _, c := range []struct {
		body map[string]any
		want string
	}{
		{map[string]any{"sale_ends_at": now.Add(-2 * time.Hour)}, "sale_ends_at must be after sale_starts_at."},
		{map[string]any{"max_per_account": 5000}, "max_per_account and max_per_hold must be between 1 and 1000."},
		{map[string]any{"price_levels": []map[string]any{{"code": "Z", "price_cents": 1}}}, `Price level "Z" is not one of this event's.`},
		{map[string]any{"price_levels": []map[string]any{{"code": "A", "price_cents": 1, "color": "blue"}}}, `The color of level "A" must be written #rrggbb, like #1f6feb.`},
		{map[string]any{"name": " "}, "Name must be 1 to 200 characters."},
	} {
		r = ana.do(http.MethodPatch, "/api/events/"+id, c.body)
		requireProblem(t, r, http.StatusBadRequest, "invalid-event")
		require.Equal(t, c.want, r.Body["detail"])
	}
	requireProblem(t, ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{"venue_id": 2}), http.StatusBadRequest, "unknown-field")
	require.Equal(t, "Edited Night", ana.do(http.MethodGet, "/api/organizer/events/"+id, nil).Body["name"], "a refused change changes nothing")

	// Publish, then open the sale.
	for _, st := range []string{"scheduled", "on_sale"} {
		r = ana.do(http.MethodPut, "/api/events/"+id+"/status", map[string]any{"status": st})
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	}
	waitUntil(t, 10*time.Second, func() bool { return call(t, srv, http.MethodGet, "/api/events/"+id, "", nil).Status == http.StatusOK },
		"the published event to be public (the event cache keeps a miss 2 s)")

	for _, c := range []struct {
		method, path string
		body         any
	}{{http.MethodGet, "/api/organizer/events/" + id, nil}, {http.MethodPatch, "/api/events/" + id, map[string]any{"name": "Bob's"}},
		{http.MethodGet, "/api/events/" + id + "/refunds", nil}} {
		requireProblem(t, bob.do(c.method, c.path, c.body), http.StatusNotFound, "event-not-found")
		requireProblem(t, fan.do(c.method, c.path, c.body), http.StatusForbidden, "organizer-only")
	}
	requireProblem(t, ana.do(http.MethodPatch, "/api/events/999999", map[string]any{"name": "x"}), http.StatusNotFound, "event-not-found")
}

// A waiting-room setting sent as 0 is out of bounds, as the admission
// control's ceiling is: only one left out takes the default. The ceiling
// 0 an organizer sent to let nobody in became 1,000 shoppers at once.
func TestWaitingRoomSettingsSentAsZeroAreRefused(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Zero Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, ana, venueID, "Zero Night", true))
	const want = "Ceiling must be between 1 and 1000000, active_ttl_seconds and admission_ttl_seconds between 1 and 86400."
	for _, field := range []string{"ceiling", "active_ttl_seconds", "admission_ttl_seconds"} {
		room := map[string]any{"enabled": true, field: 0}
		r := ana.do(http.MethodPut, "/api/events/"+id+"/waiting-room", room)
		requireRefusal(t, r, http.StatusBadRequest, "invalid-event", want, "/"+field)
		r = ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{"waiting_room": room})
		requireRefusal(t, r, http.StatusBadRequest, "invalid-event", want, "/waiting_room/"+field)
	}
	r := ana.do(http.MethodGet, "/api/organizer/events/"+id, nil)
	require.EqualValues(t, 1000, r.Body["waiting_room"].(map[string]any)["ceiling"], "a refused change changes nothing")
	r = ana.do(http.MethodPut, "/api/events/"+id+"/waiting-room", map[string]any{"enabled": true, "ceiling": 7})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"enabled": true, "ceiling": 7.0, "active_ttl_seconds": 600.0, "admission_ttl_seconds": 900.0, "paused": false},
		r.Body["waiting_room"], "settings left out take the defaults")
}

// TestOrganizerRoutesHideOtherOrganizersResources: every organizer route
// of the OpenAPI document that names an event, an order or a venue answers
// another organizer exactly as it answers for one that does not exist (a
// 404), so an id reveals nothing. The routes come from the document (tag
// organizer), so a new one is tested as soon as it is described.
func TestOrganizerRoutesHideOtherOrganizersResources(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	ana, bob := organizerNamed(t, a, srv, "ana@example.com"), organizerNamed(t, a, srv, "bob@example.com")
	anaVenue := importVenue(t, ana, venue.Stadium("Ana Hidden Arena", "Recife", 20, 5))
	anaEvent := createEvent(t, ana, anaVenue, "Ana Hidden Show", false)
	buyer := newFan(t, srv)
	buyerID := buyer.signUp("buyer@example.com")
	r := buyer.do(http.MethodPost, "/api/events/"+itoa(anaEvent)+"/holds", map[string]any{"seats": seatIDs(t, a, anaVenue)[:1]}, "Idempotency-Key", "h1")
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	anaOrder := int64(r.Body["order_id"].(float64))

	// ids of Ana's and of nobody's: an absent order keeps its shard bits.
	ids := map[string][2]int64{
		"/api/events/{id}":           {anaEvent, 1 << 40},
		"/api/organizer/events/{id}": {anaEvent, 1 << 40},
		"/api/orders/{id}":           {anaOrder, anaOrder + 1<<30},
		"/api/organizer/orders/{id}": {anaOrder, anaOrder + 1<<30},
		"/api/venues/{id}":           {anaVenue, 1 << 40},
		// Ana's buyer, and an account nobody has.
		"/api/organizer/linked-accounts/{id}": {buyerID, 1 << 40},
		"/api/organizer/linked-orders/{id}":   {anaOrder, anaOrder + 1<<30},
	}
	// A valid body for each route that takes one, so the answer is about
	// the resource and not the body.
	bodies := map[string]any{
		"PATCH /api/events/{id}":                           map[string]any{"name": "Bob Was Here"},
		"PUT /api/events/{id}/status":                      map[string]any{"status": "cancelled"},
		"PUT /api/events/{id}/price-levels":                []map[string]any{{"code": "A", "price_cents": 1}},
		"PUT /api/events/{id}/waiting-room":                map[string]any{"enabled": true, "ceiling": 5, "active_ttl_seconds": 60, "admission_ttl_seconds": 60},
		"PUT /api/events/{id}/admission":                   map[string]any{"paused": true, "ceiling": 5},
		"PUT /api/events/{id}/entry":                       map[string]any{"doors_open_at": nil, "static_codes": false, "transfers_allowed": true, "max_transfers": 3},
		"POST /api/events/{id}/door-staff":                 map[string]any{"email": "bob@example.com"},
		"POST /api/venues/{id}/layouts":                    venue.Stadium("Bob Took It", "Recife", 10, 5),
		"POST /api/orders/{id}/refund":                     map[string]any{"reason": "customer_request"},
		"POST /api/organizer/linked-accounts/{id}/block":   map[string]any{"reason": "Bob tries"},
		"POST /api/organizer/linked-accounts/{id}/unblock": map[string]any{"reason": "Bob tries"},
		"POST /api/organizer/linked-orders/{id}/void":      map[string]any{"reason": "Bob tries"},
		"PUT /api/events/{id}/presale": map[string]any{"registration_opens_at": time.Now(), "registration_closes_at": time.Now().Add(time.Minute),
			"codes": 1, "presale_ends_at": time.Now().Add(time.Hour)},
	}
	tested := 0
	for path, item := range loadOpenAPI(t).Paths.Map() {
		for method, op := range item.Operations() {
			route := method + " " + path
			if method == http.MethodHead || !slices.Contains(op.Tags, "organizer") || !strings.Contains(path, "{id}") {
				continue
			}
			t.Run(route, func(t *testing.T) {
				prefix := path[:strings.Index(path, "{id}")+len("{id}")]
				id, ok := ids[prefix]
				require.True(t, ok, "%s names a resource this test does not know: give ids an owned and an absent one of it", route)
				body, ok := bodies[route]
				require.True(t, ok || op.RequestBody == nil, "%s takes a body: give bodies a valid one", route)
				at := func(id int64) string { return strings.Replace(path, "{id}", itoa(id), 1) }
				requireHidden(t, prefix, id, func(id int64) response { return bob.do(method, at(id), body) })
			})
			tested++
		}
	}
	require.GreaterOrEqual(t, tested, 15, "the document's organizer routes")

	// Routes that name a venue in their body (venue_id) answer another
	// organizer's venue as an absent one too, and create nothing on it.
	venueBodies := map[string]func(venueID int64) any{
		"POST /api/events": func(venueID int64) any {
			now := time.Now().UTC()
			return map[string]any{"venue_id": venueID, "layout_version": 1, "name": "Bob On Ana's Venue",
				"starts_at": now.Add(72 * time.Hour), "sale_starts_at": now.Add(-time.Hour), "sale_ends_at": now.Add(71 * time.Hour),
				"price_levels": []map[string]any{{"code": "A", "price_cents": 9000}, {"code": "B", "price_cents": 7000},
					{"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}}}
		},
	}
	// A layout's venue_id is ignored: the path (or a new venue) decides.
	ignored := []string{"POST /api/venues", "POST /api/venues/{id}/layouts"}
	named := 0
	for path, item := range loadOpenAPI(t).Paths.Map() {
		for method, op := range item.Operations() {
			route := method + " " + path
			if !slices.Contains(op.Tags, "organizer") || op.RequestBody == nil || !namesVenue(op.RequestBody.Value) || slices.Contains(ignored, route) {
				continue
			}
			t.Run(route, func(t *testing.T) {
				body, ok := venueBodies[route]
				require.True(t, ok, "%s names a venue in its body: give venueBodies a valid body for it", route)
				requireHidden(t, "venue", [2]int64{anaVenue, 1 << 40}, func(id int64) response { return bob.do(method, path, body(id)) })
			})
			named++
		}
	}
	require.Equal(t, len(venueBodies), named, "the document's routes that take a venue_id")
	r = bob.do(http.MethodGet, "/api/organizer/events", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Empty(t, r.Body["events"], "Bob created nothing on Ana's venue")

	// Nothing Bob sent changed Ana's event.
	r = ana.do(http.MethodGet, "/api/organizer/events/"+itoa(anaEvent), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "Ana Hidden Show", r.Body["name"])
	require.Equal(t, "on_sale", r.Body["status"])
}

// requireHidden checks that ask answers another organizer's resource
// (ids[0]) exactly as an absent one (ids[1]): the same 404 problem, the
// same detail but for the id (its first number).
func requireHidden(t *testing.T, what string, ids [2]int64, ask func(id int64) response) {
	t.Helper()
	theirs, absent := ask(ids[0]), ask(ids[1])
	require.Equal(t, http.StatusNotFound, absent.Status, "an absent %s: %s", what, absent.Raw)
	requireProblem(t, theirs, http.StatusNotFound, strings.TrimPrefix(absent.Body["type"].(string), "https://catraca.dev/problems/"))
	require.Equal(t, strings.Replace(absent.Body["detail"].(string), itoa(ids[1]), "N", 1), strings.Replace(theirs.Body["detail"].(string), itoa(ids[0]), "N", 1),
		"another organizer's %s reads as an absent one", what)
}

// namesVenue tells whether a request body's JSON schema has a venue_id.
func namesVenue(body *openapi3.RequestBody) bool {
	media := body.Content.Get("application/json")
	return media != nil && media.Schema != nil && media.Schema.Value.Properties["venue_id"] != nil
}

// TestEventChangesAreGuardedByETag: the event's read gives its version as
// ETag; a settings change sent with If-Match of an older version (the edit
// form opened before the control room changed the ceiling) is refused with
// 412 naming what changed, and changes nothing. Without If-Match a change
// applies as before.
func TestEventChangesAreGuardedByETag(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	anaVenue := importVenue(t, ana, venue.Stadium("Version Arena", "Recife", 20, 5))
	id := createEvent(t, ana, anaVenue, "Version Show", true)
	path := "/api/events/" + itoa(id)
	read := func() response {
		r := ana.do(http.MethodGet, "/api/organizer/events/"+itoa(id), nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.NotEmpty(t, r.Header.Get("ETag"))
		return r
	}
	form := read()
	opened := form.Header.Get("ETag")
	require.Equal(t, opened, read().Header.Get("ETag"), "reading changes nothing")

	// The control room lowers the ceiling while the form is open.
	r := ana.do(http.MethodGet, path+"/control-room", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, opened, r.Body["event_etag"])
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"paused": false, "ceiling": 300}, "If-Match", opened)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	lowered := r.Header.Get("ETag")
	require.NotEqual(t, opened, lowered)
	same := ana.do(http.MethodPut, path+"/admission", map[string]any{"paused": false, "ceiling": 300}, "If-Match", lowered)
	require.Equal(t, lowered, same.Header.Get("ETag"), "a write that changes nothing keeps the version")

	// The form saves what it loaded: refused, nothing saved.
	edit := map[string]any{"name": "Version Show Renamed", "waiting_room": map[string]any{"enabled": true, "ceiling": 1000}}
	r = ana.do(http.MethodPatch, path, edit, "If-Match", opened)
	requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
	require.Contains(t, r.Body["errors"], map[string]any{"pointer": "/waiting_room/ceiling", "detail": "The waiting room's ceiling changed: now 300."})
	require.Contains(t, r.Body["detail"], "Reload the event")
	require.Len(t, r.Body["errors"], 3, "what happened, the one change, what to do: %s", r.Raw)
	now := read()
	require.Equal(t, "Version Show", now.Body["name"])
	require.EqualValues(t, 300, now.Body["waiting_room"].(map[string]any)["ceiling"])
	require.Equal(t, lowered, now.Header.Get("ETag"))

	// Reloaded, the same edit goes through; so does a script without If-Match.
	r = ana.do(http.MethodPatch, path, edit, "If-Match", lowered)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	saved := r.Header.Get("ETag")
	require.Equal(t, saved, read().Header.Get("ETag"))
	r = ana.do(http.MethodPatch, path, map[string]any{"description": "Doors at 19h."})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, http.StatusOK, ana.do(http.MethodPatch, path, map[string]any{"description": "Doors at 20h."}, "If-Match", "*").Status)

	// Prices and the sale's status are versioned too. The control room's
	// If-Match guards only what it sends: a change of the prices (or a
	// pause a second earlier) does not refuse its ceiling, but a ceiling
	// set from another tab since it read the event does, and a resume
	// from a page that missed a pause cannot undo it.
	current := read().Header.Get("ETag")
	r = ana.do(http.MethodPut, path+"/price-levels", []map[string]any{{"code": "A", "price_cents": 9900}}, "If-Match", current)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"paused": true}, "If-Match", current)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"ceiling": 400}, "If-Match", current)
	require.Equal(t, http.StatusOK, r.Status, "neither the prices nor the pause are the ceiling: %s", r.Raw)
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"ceiling": 350}, "If-Match", current)
	requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
	require.Equal(t, []any{map[string]any{"pointer": "/waiting_room/ceiling", "detail": "The waiting room's ceiling changed: now 400."}},
		r.Body["errors"].([]any)[1:2], "only the field sent is named: %s", r.Raw)
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"paused": false}, "If-Match", current)
	requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
	require.Contains(t, r.Body["errors"], map[string]any{"pointer": "/waiting_room/paused", "detail": "Admission paused changed: now true."})
	require.Equal(t, true, read().Body["waiting_room"].(map[string]any)["paused"], "the pause holds")
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"paused": false, "ceiling": 300}, "If-Match", read().Header.Get("ETag"))
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	current = read().Header.Get("ETag")
	require.Equal(t, http.StatusOK, ana.do(http.MethodPut, path+"/status", map[string]any{"status": "closed"}).Status)
	r = ana.do(http.MethodPut, path+"/waiting-room", map[string]any{"enabled": false}, "If-Match", current)
	requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
	require.Contains(t, r.Body["errors"], map[string]any{"pointer": "/status", "detail": "The status changed: now closed."})
	// The status takes If-Match as well: reopening the sale from a page
	// loaded before it was closed is refused, and changes nothing.
	r = ana.do(http.MethodPut, path+"/status", map[string]any{"status": "on_sale"}, "If-Match", current)
	requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
	require.Contains(t, r.Body["errors"], map[string]any{"pointer": "/status", "detail": "The status changed: now closed."})
	require.Equal(t, "closed", read().Body["status"])
	r = ana.do(http.MethodPut, path+"/status", map[string]any{"status": "on_sale"}, "If-Match", read().Header.Get("ETag"))
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, "on_sale", r.Body["status"])
	require.Equal(t, r.Header.Get("ETag"), read().Header.Get("ETag"))

	// Tags are compared strongly, and a tag that is none of our versions
	// never matches (RFC 9110): 412, saying so; a value that is no tag at
	// all is a 400.
	current = read().Header.Get("ETag")
	for _, tag := range []string{"W/" + current, `"abc"`, `"0"`, `"99999"`} {
		r = ana.do(http.MethodPatch, path, edit, "If-Match", tag)
		requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
		require.Equal(t, `If-Match names no version of this event, so nothing was saved: send the ETag that reading the event answered (it is now `+
			current+`); a weak tag (W/) never matches.`, r.Body["detail"], "If-Match: %s", tag)
	}
	requireProblem(t, ana.do(http.MethodPatch, path, edit, "If-Match", strings.Trim(current, `"`)), http.StatusBadRequest, "invalid-if-match")
	require.Equal(t, http.StatusOK, ana.do(http.MethodPatch, path, edit, "If-Match", `"0", `+current).Status, "any tag of a list may match")

	// A pause sends only "paused": it keeps whatever ceiling is set now.
	r = ana.do(http.MethodPut, path+"/admission", map[string]any{"paused": true})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"enabled": true, "ceiling": 1000.0, "paused": true, "active_ttl_seconds": 600.0, "admission_ttl_seconds": 900.0},
		r.Body["waiting_room"])
}

// TestConcurrentEditsOfOneVersion: of several writes based on the same
// version sent at once, one applies and every other is told it is stale.
func TestConcurrentEditsOfOneVersion(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	id := createEvent(t, ana, importVenue(t, ana, venue.Stadium("Race Arena", "Recife", 20, 5)), "Race Show", true)
	r := ana.do(http.MethodGet, "/api/organizer/events/"+itoa(id), nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	tag := r.Header.Get("ETag")
	const writers = 8
	statuses := make(chan int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			statuses <- ana.do(http.MethodPut, "/api/events/"+itoa(id)+"/admission", map[string]any{"paused": false, "ceiling": 100 + i}, "If-Match", tag).Status
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	require.Equal(t, map[int]int{http.StatusOK: 1, http.StatusPreconditionFailed: writers - 1}, count)
}

// TestRenamingAVenueChangesItsEventsVersions: the event's representation
// carries its venue's name, so renaming the venue (an operator's change)
// is a new version of each of its events, and an edit based on the old one
// is told what changed.
func TestRenamingAVenueChangesItsEventsVersions(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	ana := organizerNamed(t, a, srv, "ana@example.com")
	venueID := importVenue(t, ana, venue.Stadium("Old Name Arena", "Recife", 20, 5))
	id := createEvent(t, ana, venueID, "Rename Show", false)
	path := "/api/organizer/events/" + itoa(id)
	before := ana.do(http.MethodGet, path, nil)
	require.Equal(t, http.StatusOK, before.Status, string(before.Raw))

	_, err := a.Catalog.Exec(context.Background(), `UPDATE venues SET name = 'New Name Arena' WHERE id = $1`, venueID)
	require.NoError(t, err)
	after := ana.do(http.MethodGet, path, nil)
	require.Equal(t, "New Name Arena", after.Body["venue_name"])
	require.NotEqual(t, before.Header.Get("ETag"), after.Header.Get("ETag"), "what the event shows changed")

	r := ana.do(http.MethodPatch, "/api/events/"+itoa(id), map[string]any{"name": "Renamed Show"}, "If-Match", before.Header.Get("ETag"))
	requireProblem(t, r, http.StatusPreconditionFailed, "event-changed")
	require.Contains(t, r.Body["errors"], map[string]any{"pointer": "/venue_name", "detail": "The venue's name changed: now New Name Arena."})

	_, err = a.Catalog.Exec(context.Background(), `UPDATE venues SET name = 'New Name Arena' WHERE id = $1`, venueID)
	require.NoError(t, err)
	require.Equal(t, after.Header.Get("ETag"), ana.do(http.MethodGet, path, nil).Header.Get("ETag"), "the same name again is no change")
}
