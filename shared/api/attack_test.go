package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/pspsim"
)

// send posts a raw body with a content type, f's session and headers
// (name, value, …).
func (f *fan) send(method, path, contentType, body string, header ...string) response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := f.client.Do(req)
	require.NoError(f.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(f.t, err)
	out := response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(f.t, json.Unmarshal(raw, &out.Body))
	}
	return out
}

// eventBody is a new event of venueID as JSON, with extra members spliced
// in (each `"key":value`, comma-led).
func eventBody(venueID int64, name, extra string) string {
	return `{"venue_id":` + itoa(venueID) + `,"layout_version":1,"name":"` + name + `","starts_at":"2031-01-02T20:00:00Z",` +
		`"sale_starts_at":"2030-12-01T10:00:00Z","sale_ends_at":"2031-01-02T18:00:00Z"` + extra + `}`
}

const fourLevels = `,"price_levels":[{"code":"A","price_cents":100},{"code":"B","price_cents":100},{"code":"C","price_cents":100},{"code":"GA","price_cents":100}]`

// A price level listed twice in one request is refused with the place of
// the second: creating an event with one answered 500 (the catalog's
// unique key), and an edit applied whichever came last.
func TestDuplicatePriceLevelsAreRefused(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Twice Arena", "Recife", 20, 5))
	twice := `,"price_levels":[{"code":"A","price_cents":100},{"code":"B","price_cents":100},{"code":"A","price_cents":200},{"code":"C","price_cents":100},{"code":"GA","price_cents":100}]`
	requireRefusal(t, ana.send(http.MethodPost, "/api/events", "application/json", eventBody(venueID, "Twice", twice)),
		http.StatusBadRequest, "invalid-event", `Price level "A" is listed twice; list each level once.`, "/price_levels/2/code")
	require.Empty(t, ana.do(http.MethodGet, "/api/organizer/events", nil).Body["events"], "nothing half-written")

	id := itoa(createEvent(t, ana, venueID, "Once", false))
	requireRefusal(t, ana.send(http.MethodPatch, "/api/events/"+id, "application/json", `{"price_levels":[{"code":"A","price_cents":1},{"code":"A","price_cents":2}]}`),
		http.StatusBadRequest, "invalid-event", `Price level "A" is listed twice; list each level once.`, "/price_levels/1/code")
	requireRefusal(t, ana.send(http.MethodPut, "/api/events/"+id+"/price-levels", "application/json", `[{"code":"B","price_cents":1},{"code":"B","price_cents":2}]`),
		http.StatusBadRequest, "invalid-event", `Price level "B" is listed twice; list each level once.`, "/1/code")
	r := ana.do(http.MethodGet, "/api/organizer/events/"+id, nil)
	require.EqualValues(t, 9000, r.Body["price_levels"].([]any)[0].(map[string]any)["price_cents"], "a refused change changes nothing")
}

// Waiting-room settings are replaced as a whole, so they must say whether
// the room is on: {"ceiling":50} alone used to turn an event's waiting room
// off (and made a new event's room off).
func TestWaitingRoomSettingsMustSayEnabled(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Room Arena", "Recife", 20, 5))
	const detail = `Say whether the waiting room is on: "enabled": true or false (the settings are replaced as a whole).`
	requireRefusal(t, ana.send(http.MethodPost, "/api/events", "application/json", eventBody(venueID, "Roomless", fourLevels+`,"waiting_room":{"ceiling":50}`)),
		http.StatusBadRequest, "invalid-event", detail, "/waiting_room/enabled")
	require.Empty(t, ana.do(http.MethodGet, "/api/organizer/events", nil).Body["events"])

	id := itoa(createEvent(t, ana, venueID, "Gated", true))
	requireRefusal(t, ana.send(http.MethodPatch, "/api/events/"+id, "application/json", `{"waiting_room":{"ceiling":50}}`),
		http.StatusBadRequest, "invalid-event", detail, "/waiting_room/enabled")
	requireRefusal(t, ana.send(http.MethodPut, "/api/events/"+id+"/waiting-room", "application/json", `{"ceiling":50}`),
		http.StatusBadRequest, "invalid-event", detail, "/enabled")
	r := ana.do(http.MethodGet, "/api/organizer/events/"+id, nil)
	require.Equal(t, true, r.Body["waiting_room"].(map[string]any)["enabled"], "the room stays on")

	r = ana.send(http.MethodPatch, "/api/events/"+id, "application/json", `{"waiting_room":{"enabled":true,"ceiling":50}}`)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.EqualValues(t, 50, r.Body["waiting_room"].(map[string]any)["ceiling"])
	r = ana.send(http.MethodPut, "/api/events/"+id+"/waiting-room", "application/json", `{"enabled":false,"ceiling":60,"active_ttl_seconds":600,"admission_ttl_seconds":900}`)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, false, r.Body["waiting_room"].(map[string]any)["enabled"])
}

// A body that is not the JSON value a route takes is told so in words, not
// in Go's type names; null is not an empty object, and a null member of a
// PATCH is not "left out".
func TestBodiesOfTheWrongShapeAreNamed(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Shape Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, ana, venueID, "Shape Show", false))
	for _, body := range []string{`null`, `[]`, `"x"`, `1`, ` null `} {
		for _, path := range []string{"/api/events/" + id, "/api/events/" + id + "/admission"} {
			method := map[bool]string{true: http.MethodPatch, false: http.MethodPut}[path == "/api/events/"+id]
			r := ana.send(method, path, "application/json", body)
			requireProblem(t, r, http.StatusBadRequest, "malformed-json")
			require.Equal(t, "The body must be a JSON object.", r.Body["detail"], "%s %s", path, body)
		}
	}
	r := ana.send(http.MethodPut, "/api/events/"+id+"/price-levels", "application/json", `{"code":"A","price_cents":1}`)
	requireProblem(t, r, http.StatusBadRequest, "malformed-json")
	require.Equal(t, "The body must be a JSON array.", r.Body["detail"])

	for body, want := range map[string]string{
		`{"max_per_account":"6"}`:               `Field "max_per_account" must be a whole number.`,
		`{"max_per_account":1.5}`:               `Field "max_per_account" must be a whole number.`,
		`{"name":7}`:                            `Field "name" must be a string.`,
		`{"waiting_room":{"enabled":"yes"}}`:    `Field "waiting_room.enabled" must be true or false.`,
		`{"price_levels":{"code":"A"}}`:         `Field "price_levels" must be an array.`,
		`{"starts_at":"10000-01-02T20:00:00Z"}`: `"10000-01-02T20:00:00Z" is not a date-time: write it as RFC 3339, like 2031-01-02T20:00:00Z.`,
		`{"name": null }`:                       `Field "name" cannot be null: leave it out to keep its value.`,
		`{"nAme":"x"}`:                          `Unknown field "nAme": field names are case-sensitive.`,
		`{"waiting_room":{"Enabled":true}}`:     `Unknown field "Enabled": field names are case-sensitive.`,
		`{"waiting_room":null}`:                 `Field "waiting_room" cannot be null: leave it out to keep its value.`,
		`{"starts_at":"2031-01-02"}`:            `"2031-01-02" is not a date-time: write it as RFC 3339, like 2031-01-02T20:00:00Z.`,
	} {
		r := ana.send(http.MethodPatch, "/api/events/"+id, "application/json", body)
		require.Equal(t, http.StatusBadRequest, r.Status, body)
		require.Equal(t, want, r.Body["detail"], body)
	}
}

// Every line of a CSV seat list has the columns of the first: a seventh
// column was silently dropped and a missing one was blamed on the last.
func TestCSVLinesHaveTheColumnsOfTheFirst(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	r := postCSV(t, ana, "/api/venues?name=T&city=R&dry_run=true", "section,row,seat,x,y,price_level\n1,A,1,1,1,A,extra\n1,A,2,1,1\n1,A,3,1,1,A\n")
	requireProblem(t, r, http.StatusBadRequest, "invalid-layout")
	require.Equal(t, []any{
		map[string]any{"line": 2.0, "detail": "this line has 7 columns and the first line 6: every line needs section,row,seat,x,y,price_level"},
		map[string]any{"line": 3.0, "detail": "this line has 5 columns and the first line 6: every line needs section,row,seat,x,y,price_level"},
	}, r.Body["errors"])
}

// A price of 0 is refused when it is set: the payment provider charges at
// least one cent, so a free seat's checkout answered 500 and its order
// stayed unpayable until the hold expired.
func TestZeroPricesAreRefused(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Free Arena", "Recife", 20, 5))
	const detail = `price_cents of level "A" must be between 1 and 100000000: the payment provider charges at least one cent.`
	free := `,"price_levels":[{"code":"A","price_cents":0},{"code":"B","price_cents":100},{"code":"C","price_cents":100},{"code":"GA","price_cents":100}]`
	requireRefusal(t, ana.send(http.MethodPost, "/api/events", "application/json", eventBody(venueID, "Free", free)),
		http.StatusBadRequest, "invalid-event", detail, "/price_levels/0/price_cents")
	id := itoa(createEvent(t, ana, venueID, "Priced", false))
	requireRefusal(t, ana.send(http.MethodPut, "/api/events/"+id+"/price-levels", "application/json", `[{"code":"A","price_cents":0}]`),
		http.StatusBadRequest, "invalid-event", detail, "/0/price_cents")
	requireRefusal(t, ana.send(http.MethodPatch, "/api/events/"+id, "application/json", `{"price_levels":[{"code":"A","price_cents":0}]}`),
		http.StatusBadRequest, "invalid-event", detail, "/price_levels/0/price_cents")
}

// After an event is cancelled its pending orders cannot start a payment:
// checkout used to send the fan to the PSP's page to be charged and then
// refunded.
func TestCancelledEventsTakeNoNewPayment(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	org := s.organizerOf(t)
	f := newFan(t, s.srv)
	f.signUp("late@example.com")
	_, orderID := s.hold(t, f, "late", s.seats[7])
	r := org.do(http.MethodPut, "/api/events/"+itoa(s.eventID)+"/status", map[string]any{"status": "cancelled"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	tries := 0
	waitUntil(t, 10*time.Second, func() bool {
		// The event cache may hold the event as on sale for 2 s.
		tries++
		return f.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", map[string]any{"seats": []int64{s.seats[8+tries]}},
			"Idempotency-Key", "probe-"+itoa(int64(tries))).Status == http.StatusForbidden
	}, "the cancellation to reach the event cache")
	requireRefusal(t, f.do(http.MethodPost, "/api/orders/"+itoa(orderID)+"/checkout", nil), http.StatusConflict, "order-not-payable", "This event was cancelled: its orders can no longer be paid.", "")
	require.Zero(t, s.count(t, `SELECT count(*) FROM payments WHERE order_id = $1`, orderID), "no payment attempt")
	require.Empty(t, s.sim.Payments())
}

// A cancelled event refuses every change, as PATCH did already: prices,
// waiting room and admission used to change on it.
func TestCancelledEventsCannotChange(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	id := stoppedEvent(t, ana, "Gone", "cancelled")
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPatch, "", map[string]any{"name": "Back"}},
		{http.MethodPut, "/price-levels", []map[string]any{{"code": "A", "price_cents": 1}}},
		{http.MethodPut, "/waiting-room", map[string]any{"enabled": false}},
		{http.MethodPut, "/admission", map[string]any{"paused": true, "ceiling": 5}},
		// Entry rules and door staff too: both used to be saved.
		{http.MethodPut, "/entry", map[string]any{"doors_open_at": nil, "static_codes": true, "transfers_allowed": false, "max_transfers": 0}},
		{http.MethodPost, "/door-staff", map[string]any{"email": "bob@example.com"}},
	} {
		requireRefusal(t, ana.do(c.method, "/api/events/"+id+c.path, c.body), http.StatusBadRequest, "invalid-event", "A cancelled event cannot change.", "")
	}
	e := ana.do(http.MethodGet, "/api/organizer/events/"+id, nil).Body
	require.EqualValues(t, 9000, e["price_levels"].([]any)[0].(map[string]any)["price_cents"])
	require.Equal(t, map[string]any{"enabled": true, "ceiling": 1000.0, "active_ttl_seconds": 600.0, "admission_ttl_seconds": 900.0, "paused": false}, e["waiting_room"])
}

// PUT /api/events/{id}/waiting-room fills settings left out with the
// defaults a new event gets, as the document says: {"enabled": true} was
// refused for a ceiling the client never sent.
func TestWaitingRoomSettingsLeftOutTakeDefaults(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Default Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, ana, venueID, "Defaults", false))
	r := ana.do(http.MethodPut, "/api/events/"+id+"/waiting-room", map[string]any{"enabled": true})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"enabled": true, "ceiling": 1000.0, "active_ttl_seconds": 600.0, "admission_ttl_seconds": 900.0, "paused": false}, r.Body["waiting_room"])
}

// An email address with an invisible character (a zero-width space, a
// direction override) is refused: it made an account whose address looks
// like someone else's in the organizer's search and CSV exports.
func TestEmailsWithInvisibleCharactersAreRefused(t *testing.T) {
	t.Parallel()
	srv := serve(t, apptest.New(t, 1))
	for _, email := range []string{"fan@exa\u200bmple.com", "\u202efan@example.com", "fan\u00ad@example.com", "fan\u2060@example.com"} {
		r := newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": "a long enough password", "name": "Fan"})
		requireRefusal(t, r, http.StatusBadRequest, "invalid-account",
			fmt.Sprintf("Invalid account data: %q has an invisible character; type the address again.", email), "/email")
	}
	// A space is no invisible character (outsider's csvemail.py).
	for _, email := range []string{"ana silva@example.com", "ana@exam ple.com"} {
		r := newFan(t, srv).do(http.MethodPost, "/api/accounts", map[string]any{"email": email, "password": "a long enough password", "name": "Fan"})
		requireRefusal(t, r, http.StatusBadRequest, "invalid-account",
			fmt.Sprintf("Invalid account data: %q has a space in it; an email address has none.", email), "/email")
	}
}

// A PATCH that sets a limit to 0 is refused as the message says: it read
// as "left out" and put back the default (6 tickets, 480 s holds), the
// opposite of an organizer sending 0 to stop sales.
func TestPatchedLimitsOfZeroAreRefused(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Zero Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, ana, venueID, "Limits", false))
	for field, detail := range map[string]string{
		"max_per_account":  "max_per_account and max_per_hold must be between 1 and 1000.",
		"max_per_hold":     "max_per_account and max_per_hold must be between 1 and 1000.",
		"hold_ttl_seconds": "hold_ttl_seconds must be between 1 and 3600.",
	} {
		requireRefusal(t, ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{field: 0}), http.StatusBadRequest, "invalid-event", detail, "/"+field)
	}
	e := ana.do(http.MethodGet, "/api/organizer/events/"+id, nil).Body
	require.EqualValues(t, 6, e["max_per_account"])
	require.EqualValues(t, 4, e["max_per_hold"])
	require.EqualValues(t, 480, e["hold_ttl_seconds"])
}

// A new event's limits are read as PATCH reads them: a 0 that is sent is
// refused (it became the default, 6 tickets or 480 s, in silence), one
// left out takes the default; and a hold may not take more tickets than
// one fan may buy.
func TestCreatedLimitsOfZeroAreRefusedAndHoldsFitTheAccountLimit(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Zero New Arena", "Recife", 20, 5))
	create := func(limits map[string]any) response {
		now := time.Now().UTC()
		body := map[string]any{"venue_id": venueID, "layout_version": 1, "name": "New limits",
			"starts_at": now.Add(72 * time.Hour), "sale_starts_at": now.Add(-time.Hour), "sale_ends_at": now.Add(71 * time.Hour),
			"price_levels": []map[string]any{{"code": "A", "price_cents": 9000}, {"code": "B", "price_cents": 7000}, {"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}}}
		maps.Copy(body, limits)
		return ana.do(http.MethodPost, "/api/events", body)
	}
	for field, detail := range map[string]string{
		"max_per_account":  "max_per_account and max_per_hold must be between 1 and 1000.",
		"max_per_hold":     "max_per_account and max_per_hold must be between 1 and 1000.",
		"hold_ttl_seconds": "hold_ttl_seconds must be between 1 and 3600.",
	} {
		requireRefusal(t, create(map[string]any{field: 0}), http.StatusBadRequest, "invalid-event", detail, "/"+field)
	}
	r := create(nil)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, 6, r.Body["max_per_account"])
	require.EqualValues(t, 6, r.Body["max_per_hold"])
	require.EqualValues(t, 480, r.Body["hold_ttl_seconds"])

	over := "max_per_hold (8) cannot be more than max_per_account (4): one hold cannot take more tickets than one fan may buy."
	requireRefusal(t, create(map[string]any{"max_per_account": 4, "max_per_hold": 8}), http.StatusBadRequest, "invalid-event", over, "/max_per_hold")
	r = create(map[string]any{"max_per_account": 4})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.EqualValues(t, 4, r.Body["max_per_hold"], "left out, a hold may take as many as the fan may buy")
	// Lowering the account limit alone lowered the hold limit for good (4/4,
	// then 1/1, then 6/1: the outsider's limits.py): it is refused instead.
	requireRefusal(t, ana.do(http.MethodPatch, "/api/events/"+itoa(int64(r.Body["id"].(float64))), map[string]any{"max_per_hold": 8}),
		http.StatusBadRequest, "invalid-event", over, "/max_per_hold")
	path := "/api/events/" + itoa(int64(r.Body["id"].(float64)))
	requireRefusal(t, ana.do(http.MethodPatch, path, map[string]any{"max_per_account": 1}), http.StatusBadRequest, "invalid-event",
		`max_per_account (1) is below this event's max_per_hold (4): send max_per_hold too, at most 1, as in {"max_per_account": 1, "max_per_hold": 1}.`,
		"/max_per_account")
	// The advice is given only for a limit that is itself valid: for -5 it
	// suggested {"max_per_account": -5, "max_per_hold": -5}, refused too.
	for _, bad := range []int{-5, 1001} {
		requireRefusal(t, ana.do(http.MethodPatch, path, map[string]any{"max_per_account": bad}), http.StatusBadRequest, "invalid-event",
			"max_per_account and max_per_hold must be between 1 and 1000.", "/max_per_account")
	}
	r = ana.do(http.MethodPatch, path, map[string]any{"max_per_account": 1, "max_per_hold": 1})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	r = ana.do(http.MethodPatch, path, map[string]any{"max_per_account": 6})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.EqualValues(t, 1, r.Body["max_per_hold"], "left out, the hold limit keeps its value")
}

// Entry rules replace the event's as a whole, so PUT sends every member
// (found by FuzzAPI): {"max_transfers": 3} alone also turned transfers off.
func TestEntryRulesAreSentWhole(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Door Arena", "Recife", 20, 5))
	path := "/api/events/" + itoa(createEvent(t, ana, venueID, "Doors", false)) + "/entry"
	for body, missing := range map[string]string{`{}`: "doors_open_at", `{"max_transfers":3,"doors_open_at":null}`: "static_codes",
		`{"doors_open_at":null,"static_codes":true,"max_transfers":3}`: "transfers_allowed"} {
		requireRefusal(t, ana.send(http.MethodPut, path, "application/json", body), http.StatusBadRequest, "invalid-settings",
			`Send "`+missing+`": the entry rules are replaced as a whole (doors_open_at may be null).`, "/"+missing)
	}
	r := ana.send(http.MethodPut, path, "application/json", `{"doors_open_at":null,"static_codes":false,"transfers_allowed":true,"max_transfers":3}`)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Equal(t, map[string]any{"doors_open_at": nil, "static_codes": false, "transfers_allowed": true, "max_transfers": 3.0}, r.Body)
}

// TestMalformedQueryIsRefused: a query string Go's parser cannot read was
// dropped pair by pair, so ?q=% searched for every event; it is a 400 that
// says how to write it, as is a parameter sent twice.
func TestMalformedQueryIsRefused(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	f := newFan(t, serve(t, a))
	for q, want := range map[string][2]string{
		"q=%": {"invalid-parameter", `Query parameter "q" has a malformed value ("%")`}, "q=rock%zz": {"invalid-parameter", "percent-encode"},
		"city=Rio;q=x": {"invalid-parameter", `Query parameter "city" has a malformed value`},
		// A bad escape in a parameter was dropped: the default page, the first.
		"limit=%zz":  {"invalid-parameter", `Query parameter "limit" has a malformed value ("%zz")`},
		"cursor=%%%": {"invalid-parameter", `"cursor"`}, "%zz=1": {"invalid-parameter", `"%zz" is not a well-formed parameter name`},
		// A parameter sent twice was read first-wins: ?city=Rio&city=Recife
		// listed Rio's events as if Recife were not asked.
		"city=Rio&city=Recife": {"invalid-parameter", "is sent twice"}, "limit=1&q=x&limit=100": {"invalid-parameter", "is sent twice"},
	} {
		r := f.do(http.MethodGet, "/api/events?"+q, nil)
		requireProblem(t, r, http.StatusBadRequest, want[0])
		require.Contains(t, r.Body["detail"], want[1], q)
	}
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/api/events?q=100%25&city=Rio", nil).Status)

	// The zero time is the filter's "no bound": to=0001-01-01 listed every
	// event instead of none.
	for _, q := range []string{"to=0001-01-01T00:00:00Z", "from=1969-12-31"} {
		r := f.do(http.MethodGet, "/api/events?"+q, nil)
		requireProblem(t, r, http.StatusBadRequest, "invalid-parameter")
		require.Contains(t, r.Body["detail"], "from 1970 on", q)
	}
}

// A key sent twice in one object was read last-wins: {"pool":"FLOOR",
// "quantity":1,"quantity":4} held four places. It is a 400 that names the
// key, at any depth, however the key is escaped.
func TestRepeatedKeysAreRefused(t *testing.T) {
	t.Parallel()
	_, ana, _, f := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Twice Keys Arena", "Recife", 20, 5))
	holds := "/api/events/" + itoa(createEvent(t, ana, venueID, "Twice Keys", false)) + "/holds"
	for body, want := range map[string][2]string{
		`{"pool":"FLOOR","quantity":1,"quantity":4}`:      {"quantity", "/quantity"},
		`{"best":{"quantity":1,"quantity":4}}`:            {"best.quantity", "/best/quantity"},
		`{"pool":"FLOOR","quantity":1,"qu\u0061ntity":4}`: {"quantity", "/quantity"},
	} {
		requireRefusal(t, f.send(http.MethodPost, holds, "application/json", body, "Idempotency-Key", "twice"),
			http.StatusBadRequest, "duplicate-field", `Field "`+want[0]+`" is sent twice in one object: send each field once.`, want[1])
	}
	r := f.do(http.MethodGet, "/api/me/orders", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	require.Empty(t, r.Body["orders"], "nothing was held")

	requireRefusal(t, ana.send(http.MethodPost, "/api/events", "application/json", eventBody(venueID, "Twice", fourLevels+`,"name":"Other"`)),
		http.StatusBadRequest, "duplicate-field", `Field "name" is sent twice in one object: send each field once.`, "/name")
	requireRefusal(t, ana.send(http.MethodPost, "/api/events", "application/json",
		eventBody(venueID, "Twice", `,"price_levels":[{"code":"A","price_cents":100},{"code":"B","price_cents":1,"price_cents":100}]`)),
		http.StatusBadRequest, "duplicate-field", `Field "price_levels.price_cents" is sent twice in one object: send each field once.`, "/price_levels/1/price_cents")
	// The same key in sibling or nested objects is no repeat.
	r = ana.send(http.MethodPost, "/api/events", "application/json", eventBody(venueID, "Once", fourLevels+`,"waiting_room":{"enabled":true,"ceiling":50}`))
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
}

// Text that is not UTF-8 was replaced by U+FFFD, so a pool named in
// Latin-1 was a 404 seat-not-found and a name was stored mangled: it is a
// 400 that says the body is not UTF-8, as is a lone UTF-16 surrogate.
func TestBodiesThatAreNotUTF8AreRefused(t *testing.T) {
	t.Parallel()
	_, ana, _, f := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Latin Arena", "Recife", 20, 5))
	holds := "/api/events/" + itoa(createEvent(t, ana, venueID, "Latin", false)) + "/holds"
	r := f.send(http.MethodPost, holds, "application/json", `{"pool":"FL`+"\xd4"+`OR","quantity":1}`, "Idempotency-Key", "latin")
	requireRefusal(t, r, http.StatusBadRequest, "invalid-text",
		`The body is not valid UTF-8: field "pool" has bytes that are not UTF-8 text. Send the body encoded as UTF-8.`, "/pool")

	r = f.send(http.MethodPost, "/api/accounts", "application/json", `{"email":"latin@example.com","password":"a long enough password","name":"Jo`+"\xe3"+`o"}`)
	requireRefusal(t, r, http.StatusBadRequest, "invalid-text",
		`The body is not valid UTF-8: field "name" has bytes that are not UTF-8 text. Send the body encoded as UTF-8.`, "/name")
	r = f.send(http.MethodPost, "/api/accounts", "application/json", `{"email":"half@example.com","password":"a long enough password","name":"Jo\ud800o"}`)
	requireRefusal(t, r, http.StatusBadRequest, "invalid-text",
		`The body is not valid Unicode text: field "name" has a \u escape of half a UTF-16 surrogate pair, which is no character.`, "/name")
	// UTF-8 and escaped pairs are text.
	r = f.send(http.MethodPost, "/api/accounts", "application/json", `{"email":"joao@example.com","password":"a long enough password","name":"João \ud83c\udfab"}`)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	require.Equal(t, "João 🎫", r.Body["account"].(map[string]any)["name"])
}

// Bytes that are not UTF-8 text, or NUL, anywhere a client writes text
// (an id in the path, a query parameter, a CSV seat list) are a 4xx
// problem, never a 500 and never stored.
func TestBadBytesInPathsAndQueriesAreProblems(t *testing.T) {
	t.Parallel()
	_, ana, _, f := cast(t)
	venueID := importVenue(t, ana, venue.Stadium("Bytes Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, ana, venueID, "Bytes", false))
	const csvHead = "section,row,seat,x,y,price_level\n"
	for _, c := range []struct {
		who                    *fan
		method, path, ct, body string
		status                 int
	}{
		{f, http.MethodGet, "/api/events/%ff", "", "", http.StatusNotFound},
		{f, http.MethodGet, "/api/events/1%00", "", "", http.StatusNotFound},
		{f, http.MethodGet, "/api/events/" + id + "%ff/availability", "", "", http.StatusNotFound},
		{f, http.MethodGet, "/api/venues/%ff/layouts/1", "", "", http.StatusNotFound},
		{f, http.MethodGet, "/api/nothing/%ff%00", "", "", http.StatusNotFound},
		{f, http.MethodGet, "/api/events?cursor=%ff", "", "", http.StatusBadRequest},
		{f, http.MethodGet, "/api/me/orders?cursor=%00", "", "", http.StatusBadRequest},
		{ana, http.MethodGet, "/api/organizer/orders?q=%ff", "", "", http.StatusBadRequest},
		{ana, http.MethodGet, "/api/organizer/orders?q=a%00", "", "", http.StatusBadRequest},
		{ana, http.MethodGet, "/api/events/" + id + "/orders.csv?q=%00", "", "", http.StatusBadRequest},
		{ana, http.MethodPost, "/api/venues?name=T%ff&city=R", "text/csv", csvHead + "101,A,1,10,10,A\n", http.StatusBadRequest},
		{ana, http.MethodPost, "/api/venues?name=T&city=R", "text/csv", csvHead + "101,\xe3,1,10,10,A\n", http.StatusBadRequest},
		{ana, http.MethodPost, "/api/venues?name=T&city=R&dry_run=true", "text/csv", csvHead + "101,A,1,10,10,\xff\n", http.StatusBadRequest},
		{ana, http.MethodPost, "/api/events/" + id + "/door-staff", "application/json", "{\"email\":\"a\xff@example.com\"}", http.StatusBadRequest},
	} {
		r := c.who.send(c.method, c.path, c.ct, c.body)
		require.Equal(t, c.status, r.Status, "%s %s: %s", c.method, c.path, r.Raw)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), "%s %s", c.method, c.path)
	}
	r := ana.do(http.MethodGet, "/api/venues", nil)
	require.Len(t, r.Body["venues"], 1, "no venue was stored")
}

// A closed sale behind a waiting room says the sale is closed: it used to
// send a fan to join a queue that no longer admits anyone.
func TestClosedSaleBehindAWaitingRoomRefusesHoldsAsClosed(t *testing.T) {
	t.Parallel()
	_, ana, _, fan := cast(t)
	id := stoppedEvent(t, ana, "Shut", "closed")
	var last response
	waitUntil(t, 10*time.Second, func() bool {
		// The event cache may hold the event as on sale for 2 s.
		last = fan.do(http.MethodPost, "/api/events/"+id+"/holds", map[string]any{"best": map[string]any{"quantity": 1}}, "Idempotency-Key", "shut")
		return last.Body["type"] != "https://catraca.dev/problems/admission-required"
	}, "the closed sale to be told")
	requireProblem(t, last, http.StatusForbidden, "sales-closed")
}

// Limits told in characters count characters, not bytes, and a name that
// shows nothing is no name: "ã" is two bytes, so an event name of 200 of
// them and a gate of 40 were refused, while a gate named " " or with a
// zero-width space alone was saved.
func TestTextLimitsCountCharactersAndRefuseBlankNames(t *testing.T) {
	t.Parallel()
	_, ana, _, _ := cast(t)
	venueID := importVenue(t, ana, venue.Stadium(strings.Repeat("ã", 200), "São João", 20, 5))
	id := itoa(createEvent(t, ana, venueID, "Limits", false))
	levels := []map[string]any{{"code": "A", "name": strings.Repeat("é", 100), "price_cents": 9000},
		{"code": "B", "price_cents": 7000}, {"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}}
	r := ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{"name": strings.Repeat("ã", 200), "price_levels": levels})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	requireRefusal(t, ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{"name": strings.Repeat("ã", 201)}),
		http.StatusBadRequest, "invalid-event", "Name must be 1 to 200 characters.", "/name")
	for _, blank := range []string{" ", "\u200b", " \u200b\u00a0"} {
		requireRefusal(t, ana.do(http.MethodPatch, "/api/events/"+id, map[string]any{"name": blank}),
			http.StatusBadRequest, "invalid-event", "Name must be 1 to 200 characters.", "/name")
	}

	checkin := func(gate, scanID string) response {
		return ana.do(http.MethodPost, "/api/events/"+id+"/checkins", map[string]any{"code": "not-a-ticket", "gate": gate, "scan_id": scanID})
	}
	r = checkin(strings.Repeat("ã", 40), strings.Repeat("é", 64))
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	for _, gate := range []string{" ", "\u200b", "\u00a0\ufeff", strings.Repeat("ã", 41)} {
		requireProblem(t, checkin(gate, "s1"), http.StatusBadRequest, "invalid-gate")
	}
	requireProblem(t, checkin("North", strings.Repeat("é", 65)), http.StatusBadRequest, "invalid-scan-id")
}

// stoppedEvent is the id of a new event of org's with a waiting room, on a
// stadium of its own, whose status org then set to status.
func stoppedEvent(t *testing.T, org *fan, name, status string) string {
	t.Helper()
	venueID := importVenue(t, org, venue.Stadium(name+" Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, org, venueID, name, true))
	r := org.do(http.MethodPut, "/api/events/"+id+"/status", map[string]any{"status": status})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	return id
}

// An event could be created, or moved, to start yesterday (outsider's
// pastdates.py); an event that has begun still takes changes that leave
// its start as it is, as the console's form sends it.
func TestEventsCannotStartInThePast(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	ana := organizerFan(t, a, serve(t, a))
	venueID := importVenue(t, ana, venue.Stadium("Past Arena", "Recife", 20, 5))
	yesterday := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	past := "starts_at (" + yesterday.Format(time.RFC3339) + ") is in the past: an event must start after now."
	requireRefusal(t, ana.do(http.MethodPost, "/api/events", map[string]any{"venue_id": venueID, "layout_version": 1, "name": "Yesterday",
		"starts_at": yesterday, "sale_starts_at": yesterday.Add(-48 * time.Hour), "sale_ends_at": yesterday.Add(time.Hour),
		"price_levels": []map[string]any{{"code": "A", "price_cents": 100}, {"code": "B", "price_cents": 100}, {"code": "C", "price_cents": 100}, {"code": "GA", "price_cents": 100}}}),
		http.StatusBadRequest, "invalid-event", past, "/starts_at")

	id := createEvent(t, ana, venueID, "Tomorrow", false)
	path := "/api/events/" + itoa(id)
	requireRefusal(t, ana.do(http.MethodPatch, path, map[string]any{"starts_at": yesterday}), http.StatusBadRequest, "invalid-event", past, "/starts_at")
	_, err := a.Catalog.Exec(context.Background(), `UPDATE events SET starts_at = $2::timestamptz, sale_starts_at = $2::timestamptz - interval '2 days' WHERE id = $1`, id, yesterday)
	require.NoError(t, err)
	r := ana.do(http.MethodPatch, path, map[string]any{"starts_at": yesterday, "sale_ends_at": yesterday.Add(2 * time.Hour), "name": "Begun"})
	require.Equal(t, http.StatusOK, r.Status, "the box office sells through the show: %s", r.Raw)
	requireRefusal(t, ana.do(http.MethodPatch, path, map[string]any{"sale_ends_at": yesterday.Add(25 * time.Hour)}), http.StatusBadRequest, "invalid-event",
		"sale_ends_at must be at most 24 hours after starts_at: a box office may sell through the show, not for days after it.", "/sale_ends_at")
}
