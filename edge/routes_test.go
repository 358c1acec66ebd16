package edge

import (
	"os"
	"strings"
	"testing"
)

func apiDoc(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../shared/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestFunctionRoutesAreGenerated fails when the API or the behaviors change
// and nobody ran go generate ./edge.
func TestFunctionRoutesAreGenerated(t *testing.T) {
	routes, params, err := RoutesOf(apiDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := SpliceRoutes(FunctionSource(), RouteTable(routes, params))
	if err != nil {
		t.Fatal(err)
	}
	if want != FunctionSource() {
		t.Fatal("function/viewer-request.js has a stale route table: run go generate ./edge")
	}
}

func TestRoutesOfReadsAccessFromSecurity(t *testing.T) {
	routes, params, err := RoutesOf(apiDoc(t))
	if err != nil {
		t.Fatal(err)
	}
	access := map[string]Access{}
	for _, r := range routes {
		access[r.Method+" "+r.Path] = r.Access
	}
	for route, want := range map[string]Access{
		"GET /api/events":                Public,
		"POST /api/session":              Public,
		"DELETE /api/session":            Public, // a session is optional
		"POST /api/psp/webhook":          Public, // signed, not logged in
		"GET /api/me/orders":             Session,
		"POST /api/events/{id}/queue":    Session,
		"POST /api/events/{id}/holds":    Gated,
		"GET /api/events/{id}/stream":    Public,
		"GET /api/orders/{id}":           Session,
		"POST /api/orders/{id}/checkout": Session,
	} {
		got, ok := access[route]
		if !ok {
			t.Errorf("%s: not in the document", route)
		} else if got != want {
			t.Errorf("%s: access %d, want %d", route, got, want)
		}
	}
	if len(params) == 0 {
		t.Error("no path parameter patterns read")
	}
}

func TestRouteTableRejectsAMissingBlock(t *testing.T) {
	if _, err := SpliceRoutes("function handler() {}", "x"); err == nil || !strings.Contains(err.Error(), "BEGIN ROUTES") {
		t.Fatalf("err = %v", err)
	}
}
