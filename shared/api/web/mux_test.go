package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestClientLeavingIsNotAServerError: a handler that fails because its
// client hung up (the request's context cancelled mid-query) answers 499
// and logs no error, so the 5xx metric and the alarms on it count only our
// failures; the same cancellation seen while the client is still there is
// ours, a 500.
func TestClientLeavingIsNotAServerError(t *testing.T) {
	var logged bytes.Buffer
	m := NewMux(slog.New(slog.NewJSONHandler(&logged, nil)), func(err error) error { return err })
	m.Route("GET /load", func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if r.URL.Query().Get("gone") == "" {
			cancel() // an inner context of ours, not the client's
		}
		return fmt.Errorf("load order 7: %w", context.Cause(ctxOr(r, ctx)))
	})
	for _, c := range []struct {
		query  string
		status int
		level  string
	}{{"?gone=1", 499, `"level":"INFO"`}, {"", http.StatusInternalServerError, `"level":"ERROR"`}} {
		logged.Reset()
		ctx, cancel := context.WithCancel(context.Background())
		if c.query != "" {
			cancel()
		}
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/load"+c.query, nil).WithContext(ctx))
		cancel()
		if rec.Code != c.status || !strings.Contains(logged.String(), c.level) {
			t.Errorf("GET /load%s: status %d, log %s; want %d and %s", c.query, rec.Code, logged.String(), c.status, c.level)
		}
	}
}

// ctxOr is the request's context when the client has gone, else ctx.
func ctxOr(r *http.Request, ctx context.Context) context.Context {
	if r.Context().Err() != nil {
		return r.Context()
	}
	return ctx
}
