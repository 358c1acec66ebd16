package api

import (
	_ "embed"
	"net/http"

	"github.com/catraca/catraca/shared/api/web"
)

// openAPIDoc is the OpenAPI 3.1 document of every route New registers;
// tests keep the two in step and validate every response of the API tests
// against it.
//
//go:embed openapi.json
var openAPIDoc []byte

var openAPIETag = web.ETag(web.Hash(openAPIDoc))

// openAPI serves GET /api/openapi.json. It changes only with a deployment:
// an hour at the edge and in browsers, revalidated by ETag after that.
func (s *Ops) openAPI(w http.ResponseWriter, r *http.Request) error {
	s.cached.Write(w, r, openAPIDoc, openAPIETag, cacheDocument)
	return nil
}

// cacheDocument: an hour at the edge and in browsers.
const cacheDocument = "public, max-age=3600"
