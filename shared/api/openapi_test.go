package api_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/api"
	"github.com/catraca/catraca/shared/dev/apptest"
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
			documented = append(documented, method+" "+p)
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
