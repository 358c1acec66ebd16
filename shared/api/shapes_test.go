package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/pspsim"
)

// A hold body names one shape. An empty seat list beside a pool, or a
// null "best" beside seats, was taken as the other shape alone: the API
// sold what openapi.json refuses, and a client that meant the seats got
// standing places.
func TestHoldBodiesNameOneShape(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	f := newFan(t, s.srv)
	f.signUp("shapes@example.com")
	seat := itoa(s.seats[0])
	for i, b := range []string{
		`{"seats":[],"pool":"FLOOR","quantity":1}`,
		`{"seats":[],"best":{"quantity":1}}`,
		`{"seats":[` + seat + `],"pool":"","quantity":0}`,
		`{"seats":[` + seat + `],"best":null}`,
		`{"pool":"FLOOR","quantity":1,"best":null}`,
	} {
		r := f.do(http.MethodPost, "/api/events/"+itoa(s.eventID)+"/holds", json.RawMessage(b), "Idempotency-Key", "shape-"+itoa(int64(i)))
		requireRefusal(t, r, http.StatusBadRequest, "invalid-hold",
			`Invalid hold request: send exactly one of {"seats":[…]}, {"pool","quantity"} or {"best":{"quantity"}}.`, "")
	}
	require.Zero(t, s.count(t, `SELECT count(*)::int FROM holds`), "no hold taken from a body of two shapes")
}
