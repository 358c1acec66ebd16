// Command gen writes the edge function's route table from edge.Behaviors and
// the API's OpenAPI document (run by go generate ./edge).
package main

import (
	"log"
	"os"

	"github.com/catraca/catraca/edge"
)

func main() {
	const fn, doc = "function/viewer-request.js", "../shared/api/openapi.json"
	spec, err := os.ReadFile(doc)
	if err != nil {
		log.Fatal(err)
	}
	routes, params, err := edge.RoutesOf(spec)
	if err != nil {
		log.Fatal(err)
	}
	src, err := os.ReadFile(fn)
	if err != nil {
		log.Fatal(err)
	}
	out, err := edge.SpliceRoutes(string(src), edge.RouteTable(routes, params))
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(fn, []byte(out), 0o644); err != nil {
		log.Fatal(err)
	}
}
