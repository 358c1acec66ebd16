package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/api"
	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// openAPI loads shared/api/openapi.json once.
var openAPI = sync.OnceValues(func() (*openapi3.T, error) {
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		return nil, err
	}
	return openapi3.NewLoader().LoadFromData(b)
})

func loadOpenAPI(t testing.TB) *openapi3.T {
	t.Helper()
	doc, err := openAPI()
	require.NoError(t, err, "openapi.json does not load")
	return doc
}

func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	require.Equal(t, "3.1.0", doc.OpenAPI)
	require.NoError(t, doc.Validate(context.Background(), openapi3.EnableExamplesValidation()))
}

// Every route the server registers is in the document, and every operation
// of the document is a route: add a route, describe it in openapi.json.
func TestOpenAPICoversEveryRoute(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	var documented []string
	for p, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if method == http.MethodHead {
				// net/http serves HEAD with the GET route's handler.
				require.NotNil(t, item.Get, "HEAD %s without a GET", p)
				continue
			}
			documented = append(documented, method+" "+p)
			if method == http.MethodGet {
				require.NotNil(t, item.Head, "GET %s answers HEAD too: describe it", p)
			}
		}
	}
	routes := api.Routes()
	require.NotEmpty(t, routes)
	var missing, extra []string
	for _, r := range routes {
		if !slices.Contains(documented, r) {
			missing = append(missing, r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			extra = append(extra, d)
		}
	}
	require.Empty(t, missing, "routes that shared/api/openapi.json does not describe")
	require.Empty(t, extra, "operations in shared/api/openapi.json that no route serves")
}

// The validation hook fails a test on a response that departs from the
// document: a wrong body, an undocumented status, an error that is not
// problem JSON.
func TestOpenAPIValidationCatchesMismatches(t *testing.T) {
	t.Parallel()
	event := func(id string) string {
		return `{"id":` + id + `,"name":"Show","category":"music","city":"Recife","description":"","venue_id":1,"venue_name":"Arena",
			"layout_version":1,"starts_at":"2031-12-24T20:00:00Z","sale_starts_at":"2031-12-01T10:00:00Z","sale_ends_at":"2031-12-24T18:00:00Z",
			"status":"on_sale","currency":"BRL","max_per_account":6,"max_per_hold":4,"hold_ttl_seconds":480,"waiting_room":{"enabled":false}}`
	}
	jsonType := http.Header{"Content-Type": {"application/json"}}
	problemType := http.Header{"Content-Type": {"application/problem+json"}}
	notFound := `{"type":"https://catraca.dev/problems/event-not-found","title":"Not Found","status":404,"detail":"No such event."}`
	get := func(path string) *http.Request { return httptest.NewRequest(http.MethodGet, path, nil) }
	require.NoError(t, checkResponse(get("/api/events/7"), http.StatusOK, jsonType, []byte(event("7"))))
	require.NoError(t, checkResponse(get("/api/events/7"), http.StatusNotFound, problemType, []byte(notFound)))
	require.NoError(t, checkResponse(get("/api/nope"), http.StatusNotFound, problemType, []byte(notFound)))
	for name, c := range map[string]struct {
		path   string
		status int
		header http.Header
		body   string
	}{
		"a field of the wrong type":              {"/api/events/7", http.StatusOK, jsonType, event(`"7"`)},
		"a required field missing":               {"/api/events/7", http.StatusOK, jsonType, `{"id":7}`},
		"a status the operation does not list":   {"/api/events/7", http.StatusTeapot, problemType, notFound},
		"an error that is not problem JSON":      {"/api/events/7", http.StatusNotFound, http.Header{"Content-Type": {"text/plain"}}, "404 page not found"},
		"a problem without its detail":           {"/api/events/7", http.StatusNotFound, problemType, `{"type":"https://catraca.dev/problems/x","title":"Not Found","status":404}`},
		"an unknown path answered with JSON":     {"/api/nope", http.StatusNotFound, jsonType, `{}`},
		"an unknown path answered with a 200":    {"/api/nope", http.StatusOK, problemType, notFound},
		"a problem type outside catraca's space": {"/api/nope", http.StatusNotFound, problemType, strings.Replace(notFound, "catraca.dev", "example.com", 1)},
	} {
		require.Error(t, checkResponse(get(c.path), c.status, c.header, []byte(c.body)), name)
	}

	// Through the hook, a mismatch fails the test once it ends.
	rec := &recordingTB{TB: t}
	h := validated(rec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(event(`"7"`)))
	}))
	h.ServeHTTP(httptest.NewRecorder(), get("/api/events/7"))
	require.Empty(t, rec.errors, "reported when the test ends, not before")
	rec.cleanup()
	require.Len(t, rec.errors, 1)
	require.Contains(t, rec.errors[0], "GET /api/events/7 → 200")
}

// recordingTB records what validated reports instead of failing.
type recordingTB struct {
	testing.TB
	errors   []string
	cleanups []func()
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) cleanup() {
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
}

// Every API test server validates its responses: a test that builds one
// from the app's handler goes through serve or validated. Benchmarks
// measure the bare handler.
func TestAPITestsValidateResponses(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_bench_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, ".Handler()") && !strings.Contains(line, "validated(") {
				t.Errorf("%s:%d: serve the app with serve(t, a) (or wrap its handler with validated) so its responses are checked against openapi.json", f, i+1)
			}
		}
	}
}

// A documented path asked with a method it does not list is a 405 problem
// whose Allow header names the document's methods.
func TestOpenAPIMethodsAreAllowed(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	srv := serve(t, apptest.New(t, 1))
	param := regexp.MustCompile(`\{[^}]+\}`)
	probes := []string{http.MethodPatch, http.MethodDelete, http.MethodPut, http.MethodPost}
	for p, item := range doc.Paths.Map() {
		var allow []string
		for method := range item.Operations() {
			allow = append(allow, method)
		}
		i := slices.IndexFunc(probes, func(m string) bool { return !slices.Contains(allow, m) })
		require.GreaterOrEqual(t, i, 0, "%s takes every method", p)
		r := call(t, srv, probes[i], param.ReplaceAllString(p, "1"), "", nil)
		requireProblem(t, r, http.StatusMethodNotAllowed, "method-not-allowed")
		got := strings.Split(r.Header.Get("Allow"), ", ")
		require.ElementsMatch(t, allow, got, p)
	}
	requireProblem(t, call(t, srv, http.MethodPatch, "/api/nope", "", nil), http.StatusNotFound, "not-found")
}

// HEAD is answered on every GET route (net/http serves it with the GET
// handler: GET's status and headers, no body), and the document describes
// it: a HEAD answered 200 used to fail validation as an undocumented route.
func TestHeadIsDescribed(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	srv := serve(t, a)
	o := organizerFan(t, a, srv)
	venueID := importVenue(t, o, venue.Stadium("Head Arena", "Recife", 20, 5))
	id := itoa(createEvent(t, o, venueID, "Head Show", false))
	for path, status := range map[string]int{
		"/api/events":                                 http.StatusOK,
		"/api/events/" + id:                           http.StatusOK,
		"/api/events/" + id + "/availability":         http.StatusOK,
		"/api/venues/" + itoa(venueID) + "/layouts/1": http.StatusOK,
		"/api/openapi.json":                           http.StatusOK,
		"/healthz":                                    http.StatusOK,
		"/api/events/99999999":                        http.StatusNotFound,
		"/api/me/orders":                              http.StatusUnauthorized,
	} {
		r := call(t, srv, http.MethodHead, path, "", nil)
		require.Equal(t, status, r.Status, path)
		require.Empty(t, r.Raw, path)
	}
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("openapi.json")
	require.NoError(t, err)
	srv := serve(t, apptest.New(t, 1))
	r := call(t, srv, http.MethodGet, "/api/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "application/json", r.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(r.Header.Get("Cache-Control"), "public, max-age="), r.Header.Get("Cache-Control"))
	require.Equal(t, string(want), string(r.Raw))

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/api/openapi.json", nil)
	require.NoError(t, err)
	req.Header.Set("If-None-Match", r.Header.Get("ETag"))
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotModified, res.StatusCode)
}

func init() {
	// Server-Sent Events are text; the document says no more about them.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
}

// openAPIRouter finds the operation of a request in openapi.json.
var openAPIRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openAPI()
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// checkResponse tells how a response to r departs from openapi.json: a
// status, header or body the operation does not list. A request no
// operation matches must be answered with problem JSON.
func checkResponse(r *http.Request, status int, header http.Header, body []byte) error {
	router, err := openAPIRouter()
	if err != nil {
		return err
	}
	if header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return err
		}
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		return checkUnrouted(status, header, body)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(r.Context(), in)
}

// checkUnrouted requires the problem JSON of components.schemas.Problem.
func checkUnrouted(status int, header http.Header, body []byte) error {
	if status < 400 || header.Get("Content-Type") != "application/problem+json" {
		return fmt.Errorf("a request no operation describes got %d %s, not problem JSON", status, header.Get("Content-Type"))
	}
	doc, _ := openAPI()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return doc.Components.Schemas["Problem"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// validated wraps the API handler so that every response it sends is
// checked against openapi.json; a mismatch fails t once the test's servers
// are closed (a handler's goroutine may outlive a failing assertion).
func validated(t testing.TB, h http.Handler) http.Handler {
	if _, bench := t.(*testing.B); bench {
		return h // benchmarks measure the handler alone
	}
	var mu sync.Mutex
	var failures []string
	var checks sync.WaitGroup
	t.Cleanup(func() {
		checks.Wait()
		for _, f := range failures {
			t.Errorf("response departs from shared/api/openapi.json: %s", f)
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &teeWriter{ResponseWriter: w}
		req := r.Clone(context.WithoutCancel(r.Context()))
		var sent bytes.Buffer
		if r.Body != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.TeeReader(r.Body, &sent), r.Body}
		}
		h.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		// Checked off the request path: timing tests see the handler's time.
		header := w.Header().Clone()
		checks.Go(func() {
			err := checkResponse(req, rec.status, header, rec.body.Bytes())
			if err == nil && rec.status < 300 {
				req.Body = io.NopCloser(&sent)
				err = checkAccepted(req)
			}
			if err != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s %s → %d: %v", req.Method, req.URL, rec.status, err))
				mu.Unlock()
			}
		})
	})
}

// checkAccepted tells how a request the API accepted departs from
// openapi.json: a parameter or body the document would refuse.
func checkAccepted(r *http.Request) error {
	router, err := openAPIRouter()
	if err != nil {
		return err
	}
	route, params, err := router.FindRoute(r)
	if err != nil {
		return err
	}
	err = openapi3filter.ValidateRequest(r.Context(), &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}})
	if err != nil {
		return fmt.Errorf("the API accepted a request the document refuses: %w", err)
	}
	return nil
}

// teeWriter keeps a copy of what a handler sends.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serve runs a's handler, validated, on a test server.
func serve(t testing.TB, a *app.App) *httptest.Server {
	srv := httptest.NewServer(validated(t, a.Handler()))
	t.Cleanup(srv.Close)
	return srv
}
