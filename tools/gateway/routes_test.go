package gateway

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/edge"
	"github.com/catraca/catraca/shared/token"
)

// TestEveryRouteAndBehaviorThroughTheFunction sends each API route of the
// OpenAPI document and each CloudFront behavior's pattern through the edge
// function: the edge asks exactly what the document says the route needs.
func TestEveryRouteAndBehaviorThroughTheFunction(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../shared/api/openapi.json")
	require.NoError(t, err)
	routes, _, err := edge.RoutesOf(doc)
	require.NoError(t, err)
	require.NotEmpty(t, routes)

	f := newFixture(t, ok)
	f.keys(7) // event 7 has a waiting room
	sess, _, err := f.session.Issue(token.Claims{Account: 42, Role: "fan"}, time.Hour)
	require.NoError(t, err)
	adm, _, err := f.admission.Issue(token.Claims{Account: 42, Event: 7}, time.Minute)
	require.NoError(t, err)
	noSession := map[string]string{}
	withSession := map[string]string{"catraca_session": sess}
	admitted := map[string]string{"catraca_session": sess, "catraca_admission_7": adm}

	reaches := func(method, target string, cookies map[string]string) int {
		before := f.calls.Load()
		w := f.do(t, method, target, cookies)
		if f.calls.Load() == before {
			return w.Code
		}
		return 0
	}
	for _, r := range routes {
		target := strings.NewReplacer("{id}", "7", "{version}", "1", "{staff}", "3").Replace(r.Path)
		require.NotContains(t, target, "{", "a path parameter the test does not fill: %s", r.Path)
		name := r.Method + " " + r.Path
		switch r.Access {
		case edge.Public:
			require.Zero(t, reaches(r.Method, target, noSession), "%s is public: it must reach the origin", name)
		case edge.Session:
			require.Equal(t, http.StatusUnauthorized, reaches(r.Method, target, noSession), name)
			require.Zero(t, reaches(r.Method, target, withSession), name)
		case edge.Gated:
			require.Equal(t, http.StatusUnauthorized, reaches(r.Method, target, noSession), name)
			require.Equal(t, http.StatusForbidden, reaches(r.Method, target, withSession), name)
			require.Zero(t, reaches(r.Method, target, admitted), name)
		}
		if r.Method == http.MethodGet && r.Access == edge.Public {
			require.Zero(t, reaches(http.MethodHead, target, noSession), "HEAD %s", r.Path)
		}
	}
	require.Equal(t, http.StatusNotFound, reaches(http.MethodGet, "/api/no-such-route", noSession),
		"a path no route serves ends at the edge")

	for _, b := range edge.Behaviors {
		target := strings.ReplaceAll(b.PathPattern, "*", "7")
		if b.PathPattern == "*" {
			target = "/events/7"
		}
		w := f.do(t, http.MethodGet, target, withSession)
		if b.Origin == "site" {
			require.Contains(t, w.Header().Get("Content-Type"), "text/html", "%s is a page of the site", target)
			continue
		}
		require.NotContains(t, w.Header().Get("Content-Type"), "text/html", "%s (%s) must reach the API, not the site", target, b.PathPattern)
	}
}
