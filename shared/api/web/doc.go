// Package web is what catraca's HTTP handler groups share: the route table
// that turns errors into RFC 9457 problem JSON, strict JSON bodies, path
// and query parameters, session checks, throttling and cached payloads.
// It holds no client of its own: each group is given the services it uses.
package web
