package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// Issue 16, defect 3: a 20,000-seat layout (far over the default body
// limit) imports, as a new venue and as a new version; every other route
// keeps the default limit, the one the WAF also applies.
func TestLayoutImportsTakeLargeBodies(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 2)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)

	l := venue.Stadium("Big Arena", "Recife", 20000, 500)
	b, err := json.Marshal(l)
	require.NoError(t, err)
	require.Greater(t, len(b), 4*config.DefaultMaxBodyBytes, "the layout is a large body")

	r := o.do(http.MethodPost, "/api/venues", l)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))
	id := strconv.Itoa(int(r.Body["venue_id"].(float64)))
	r = o.do(http.MethodPost, "/api/venues/"+id+"/layouts", l)
	require.Equal(t, http.StatusCreated, r.Status, string(r.Raw))

	big := `{"name":"` + strings.Repeat("x", config.DefaultMaxBodyBytes) + `"}`
	r = o.do(http.MethodPost, "/api/events", json.RawMessage(big))
	requireProblem(t, r, http.StatusRequestEntityTooLarge, "body-too-large")
}
