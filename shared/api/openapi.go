package api

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 document of every route New registers;
// tests keep the two in step and validate every response of the API tests
// against it.
//
//go:embed openapi.json
var openAPIDoc []byte

var openAPIETag = etagOf(hashOf(openAPIDoc))

// openAPI serves GET /api/openapi.json. It changes only with a deployment:
// an hour at the edge and in browsers, revalidated by ETag after that.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	s.writeCached(w, r, openAPIDoc, openAPIETag, cacheDocument)
	return nil
}

// Routes lists the pattern ("METHOD /path/{param}") of every route New
// registers, in registration order.
func Routes() []string {
	return newServer(Deps{}).patterns
}
