// Package edge holds what CloudFront serves and runs: the viewer-request
// function, the security headers of the response-headers policy and the
// static web app, embedded so the local gateway and the CDK app use the
// very same files.
package edge

import (
	"embed"
	"encoding/json"
	"io/fs"
)

//go:generate go run ./gen

//go:embed function/viewer-request.js
var functionSource string

//go:embed function/headers.json
var headersJSON []byte

//go:embed all:web
var web embed.FS

// FunctionSource is the CloudFront Function code (cloudfront-js-2.0).
func FunctionSource() string { return functionSource }

// SecurityHeaders are the headers every response carries (CSP, HSTS,
// frame and referrer policy), lower-case names.
func SecurityHeaders() map[string]string {
	var h map[string]string
	if err := json.Unmarshal(headersJSON, &h); err != nil {
		panic("edge: bad function/headers.json: " + err.Error())
	}
	return h
}

// Web is the static site (the S3 bucket's content).
func Web() fs.FS {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err)
	}
	return sub
}
