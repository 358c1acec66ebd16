package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/catraca/catraca/shared/problem"
)

// HandlerFunc is a handler that may fail; Mux.Route translates its errors.
type HandlerFunc func(http.ResponseWriter, *http.Request) error

// Mux is the route table every handler group mounts its routes on: a
// route's error becomes problem JSON, a path with routes for other methods
// is a 405 with Allow, anything else a 404 problem.
type Mux struct {
	mux *http.ServeMux
	log *slog.Logger
	// translate maps domain errors to problems (the router's, over every
	// group's mapping).
	translate func(error) error
	// patterns are the registered routes, in order.
	patterns []string
}

// NewMux returns an empty route table that logs to log and maps errors
// with translate.
func NewMux(log *slog.Logger, translate func(error) error) *Mux {
	m := &Mux{mux: http.NewServeMux(), log: log, translate: translate}
	m.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := m.allowed(r); allow != "" {
			w.Header().Set("Allow", allow)
			m.Fail(w, r, problem.New(http.StatusMethodNotAllowed, "method-not-allowed",
				r.Method+" is not allowed on "+r.URL.Path+"; use "+allow+"."))
			return
		}
		m.Fail(w, r, problem.New(http.StatusNotFound, "not-found", "No such endpoint: "+r.Method+" "+r.URL.Path+"."))
	})
	return m
}

// Route registers h for pattern; its query is checked first.
func (m *Mux) Route(pattern string, h HandlerFunc) {
	m.patterns = append(m.patterns, pattern)
	m.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		err := ValidQuery(r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			m.Fail(w, r, m.translate(err))
		}
	})
}

// Patterns are the registered routes, in the order they were registered.
func (m *Mux) Patterns() []string { return m.patterns }

// ServeHTTP serves the routes.
func (m *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.mux.ServeHTTP(w, r) }

// clientClosed answers a request whose client went away before it was
// answered (nginx's 499): its failure is the client's leaving, not ours,
// so it must not count as a 5xx, page anyone or log an error.
var clientClosed = &problem.Error{Status: 499, Code: "client-closed-request", Title: "Client Closed Request",
	Detail: "The request was cancelled before it was answered."}

// Fail logs a problem with its cause and sends it.
func (m *Mux) Fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) && errors.Is(r.Context().Err(), context.Canceled) {
		err = clientClosed.Wrap(err)
	}
	p := problem.From(err)
	problem.Log(m.log, r, p)
	problem.Write(w, r, p)
}

// allowed lists the methods the path of r has routes for, "" if none: a
// known path asked with another method is a 405 with Allow (RFC 9110), not
// a 404.
func (m *Mux) allowed(r *http.Request) string {
	var methods []string
	for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if _, pattern := m.mux.Handler(&http.Request{Method: method, URL: r.URL, Host: r.Host}); pattern != "/" {
			methods = append(methods, method)
		}
	}
	return strings.Join(methods, ", ")
}
