// Package problem writes RFC 9457 problem details. Every HTTP error in
// catraca goes through Write, which keeps the client-safe message apart from
// the server-side cause (logged, never sent).
package problem

import (
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"time"
)

// ContentType is the RFC 9457 media type.
const ContentType = "application/problem+json"

// Error is an HTTP error with a message fit for the client.
type Error struct {
	Status int
	// Code is a short stable identifier; it becomes the type URI.
	Code   string
	Title  string
	Detail string
	// Extra members are added to the JSON body (e.g. taken seats).
	Extra map[string]any
	// RetryAfter, when positive, is sent as Retry-After seconds.
	RetryAfter int
	// MaxAge, when positive, lets caches keep the answer that long
	// (public): an answer every viewer gets alike, such as "this event
	// has no presale", which a CDN may then serve instead of the origin.
	MaxAge time.Duration
	// Cause is logged, never sent.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Title + ": " + e.Cause.Error()
	}
	return e.Title + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Cause }

// New returns a problem with a status, a code, and a detail for the client.
func New(status int, code, detail string) *Error {
	return &Error{Status: status, Code: code, Title: http.StatusText(status), Detail: detail}
}

// The builders below return a changed copy and leave e as it was: a
// problem is often a package-level value that every request shares.

// With returns the problem with an extension member added.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Extra = maps.Clone(e.Extra)
	if c.Extra == nil {
		c.Extra = map[string]any{}
	}
	c.Extra[key] = value
	return &c
}

// RetryIn returns the problem telling the client to come back after wait,
// in whole seconds rounded up (a throttle's wait is rarely a whole second).
func (e *Error) RetryIn(wait time.Duration) *Error {
	c := *e
	c.RetryAfter = int(wait.Seconds()) + 1
	return &c
}

// CacheFor returns the problem marked cacheable by anyone for d.
func (e *Error) CacheFor(d time.Duration) *Error {
	c := *e
	c.MaxAge = d
	return &c
}

// Wrap returns the problem with its server-side cause.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.Cause = cause
	return &c
}

// From returns err as a problem. Errors that are not *Error become a 500
// that keeps err as its cause and says nothing internal to the client.
func From(err error) *Error {
	var p *Error
	if errors.As(err, &p) {
		return p
	}
	return &Error{Status: http.StatusInternalServerError, Code: "internal", Title: "Internal Server Error",
		Detail: "Something went wrong on our side. Please try again.", Cause: err}
}

// Log records a problem with its server-side cause.
func Log(log *slog.Logger, r *http.Request, p *Error) {
	level := slog.LevelInfo
	if p.Status >= 500 {
		level = slog.LevelError
	}
	attrs := []slog.Attr{slog.Int("status", p.Status), slog.String("code", p.Code), slog.String("path", r.URL.Path)}
	if p.Cause != nil {
		attrs = append(attrs, slog.String("cause", p.Cause.Error()))
	}
	log.LogAttrs(r.Context(), level, "request failed", attrs...)
}

// Write sends err as problem JSON (see From).
func Write(w http.ResponseWriter, r *http.Request, err error) {
	p := From(err)

	body := map[string]any{}
	for k, v := range p.Extra {
		body[k] = v
	}
	body["type"] = "https://catraca.dev/problems/" + p.Code
	body["title"] = p.Title
	body["status"] = p.Status
	body["detail"] = p.Detail
	body["instance"] = r.URL.Path
	if id := w.Header().Get("X-Request-Id"); id != "" {
		body["request_id"] = id
	}
	w.Header().Set("Content-Type", ContentType)
	if p.MaxAge > 0 {
		w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(p.MaxAge.Seconds())))
	} else {
		w.Header().Set("Cache-Control", "no-store")
	}
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(body)
}
