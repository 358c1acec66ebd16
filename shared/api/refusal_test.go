package api_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// TestLayoutErrorReachesTheClientWhole: the section and row that say where
// the duplicate is are part of the message (they were cut off at the last
// ": ", leaving "Seat 7 appears twice."), and the errors member points at
// the seat.
func TestLayoutErrorReachesTheClientWhole(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)

	l := venue.Layout{Name: "Twice Hall", City: "Recife", Width: 100, Height: 100, Sections: []venue.Section{{
		Code: "A", Kind: "seated", PriceLevel: "A", Rows: []venue.Row{
			{Label: "1", Seats: []venue.Seat{{Number: 1}}},
			{Label: "2", Seats: []venue.Seat{{Number: 1}}},
			{Label: "3", Seats: []venue.Seat{{Number: 6}, {Number: 7}, {Number: 7}}},
		}}}}
	requireRefusal(t, o.do(http.MethodPost, "/api/venues", l), http.StatusBadRequest, "invalid-layout",
		"Section A row 3: seat 7 appears twice.", "/sections/0/rows/2/seats/2/n")

	// Several mistakes come back together, each with where it is.
	l.Height = 0
	l.Sections[0].Rows[1].Label = "1"
	r := o.do(http.MethodPost, "/api/venues?dry_run=true", l)
	requireProblem(t, r, http.StatusBadRequest, "invalid-layout")
	require.Equal(t, []any{
		map[string]any{"pointer": "/height", "detail": "Width and height must be between 1 and 100000."},
		map[string]any{"pointer": "/sections/0/rows/1", "detail": "Section A: rows need unique labels and at least one seat."},
		map[string]any{"pointer": "/sections/0/rows/2/seats/2/n", "detail": "Section A row 3: seat 7 appears twice."},
	}, r.Body["errors"])
	require.Equal(t, "Width and height must be between 1 and 100000 (and 2 more mistakes: each is listed in errors with where it is). Fix them all and send the layout again.",
		r.Body["detail"])
}

// TestRefusalsReachTheClientUnchanged sends one request per kind of domain
// validation error and checks the domain's message arrives as written, with
// the pointer to the field at fault.
func TestRefusalsReachTheClientUnchanged(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Refusal Arena", "Recife", 20, 5))
	eventID := createEvent(t, o, venueID, "Refusal Show", false)
	ev := "/api/events/" + itoa(eventID)
	buyer := newFan(t, srv)
	buyer.signUp("refused@example.com")
	event := func(change map[string]any) map[string]any {
		spec := map[string]any{"venue_id": venueID, "layout_version": 1, "name": "Show",
			"starts_at": "2030-01-02T20:00:00Z", "sale_starts_at": "2030-01-01T10:00:00Z", "sale_ends_at": "2030-01-02T19:00:00Z",
			"price_levels": []map[string]any{{"code": "A", "price_cents": 9000}, {"code": "B", "price_cents": 7000},
				{"code": "C", "price_cents": 5000}, {"code": "GA", "price_cents": 3000}}}
		for k, v := range change {
			spec[k] = v
		}
		return spec
	}
	signUp := func(email, password, name string) map[string]any {
		return map[string]any{"email": email, "password": password, "name": name}
	}
	badKind := venue.Stadium("Odd Arena", "Recife", 20, 5)
	badKind.Sections[1].Kind = "lying"

	for _, c := range []struct {
		name           string
		who            *fan
		method, path   string
		body           any
		header         []string
		status         int
		code           string
		detail, points string
	}{
		{"short password", newFan(t, srv), "POST", "/api/accounts", signUp("a@example.com", "short", "A"), nil,
			400, "invalid-account", "Password too weak: use at least 10 characters.", "/password"},
		{"email as password", newFan(t, srv), "POST", "/api/accounts", signUp("abcdefghijk@example.com", "abcdefghijk", "A"), nil,
			400, "invalid-account", "Password too weak: do not use your email as password.", "/password"},
		{"not an email", newFan(t, srv), "POST", "/api/accounts", signUp("nope", "a long enough password", "A"), nil,
			400, "invalid-account", `Invalid account data: "nope" is not an email address.`, "/email"},
		{"no name", newFan(t, srv), "POST", "/api/accounts", signUp("b@example.com", "a long enough password", " "), nil,
			400, "invalid-account", "Invalid account data: name must be 1 to 100 characters of text.", "/name"},
		{"section kind", o, "POST", "/api/venues", badKind, nil,
			400, "invalid-layout", "Section " + badKind.Sections[1].Code + ": kind must be seated or standing.", "/sections/1/kind"},
		{"event name", o, "POST", "/api/events", event(map[string]any{"name": ""}), nil,
			400, "invalid-event", "Name must be 1 to 200 characters.", "/name"},
		{"sale window", o, "POST", "/api/events", event(map[string]any{"sale_ends_at": "2029-12-31T10:00:00Z"}), nil,
			400, "invalid-event", "sale_ends_at must be after sale_starts_at.", "/sale_ends_at"},
		{"price", o, "POST", "/api/events", event(map[string]any{"price_levels": []map[string]any{{"code": "A", "price_cents": -1}}}), nil,
			400, "invalid-event", `price_cents of level "A" must be between 1 and 100000000: the payment provider charges at least one cent.`, "/price_levels/0/price_cents"},
		{"missing price", o, "POST", "/api/events", event(map[string]any{"price_levels": []map[string]any{{"code": "A", "price_cents": 1}}}), nil,
			400, "invalid-event", `No price for level "GA" (section FLOOR).`, "/price_levels"},
		{"room ceiling", o, "POST", "/api/events", event(map[string]any{"waiting_room": map[string]any{"enabled": true, "ceiling": -5}}), nil,
			400, "invalid-event", "Ceiling must be between 1 and 1000000, active_ttl_seconds and admission_ttl_seconds between 1 and 86400.", "/waiting_room/ceiling"},
		{"status", o, "PUT", ev + "/status", map[string]any{"status": "sold"}, nil,
			400, "invalid-event", "Status must be one of scheduled, on_sale, closed, cancelled.", "/status"},
		{"unknown price level", o, "PUT", ev + "/price-levels", []map[string]any{{"code": "A", "price_cents": 1}, {"code": "Z", "price_cents": 1}}, nil,
			400, "invalid-event", `Price level "Z" is not one of this event's.`, "/1/code"},
		{"room ttl", o, "PUT", ev + "/waiting-room", map[string]any{"enabled": true, "ceiling": 10, "active_ttl_seconds": -1, "admission_ttl_seconds": 60}, nil,
			400, "invalid-event", "Ceiling must be between 1 and 1000000, active_ttl_seconds and admission_ttl_seconds between 1 and 86400.", "/active_ttl_seconds"},
		{"entry rules", o, "PUT", ev + "/entry", map[string]any{"doors_open_at": nil, "static_codes": false, "transfers_allowed": true, "max_transfers": 101}, nil,
			400, "invalid-settings", "These entry rules cannot be saved: max_transfers must be between 0 and 100.", "/max_transfers"},
		{"hold quantity", buyer, "POST", ev + "/holds", map[string]any{"pool": "FLOOR", "quantity": -1}, []string{"Idempotency-Key", "q"},
			400, "invalid-hold", "Invalid hold request: quantity must be at least 1.", "/quantity"},
		{"hold seats", buyer, "POST", ev + "/holds", map[string]any{"seats": []int64{3, 3}}, []string{"Idempotency-Key", "s"},
			400, "invalid-hold", "Invalid hold request: seat ids must be positive and listed once.", "/seats"},
		{"hold shape", buyer, "POST", ev + "/holds", map[string]any{}, []string{"Idempotency-Key", "e"},
			400, "invalid-hold", `Invalid hold request: send exactly one of {"seats":[…]}, {"pool","quantity"} or {"best":{"quantity"}}.`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			requireRefusal(t, c.who.do(c.method, c.path, c.body, c.header...), c.status, c.code, c.detail, c.points)
		})
	}
}
