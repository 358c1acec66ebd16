package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/queue"
)

// validRequestID tells whether a caller's X-Request-Id can be kept: 1 to
// 64 of A-Z, a-z, 0-9, '.', '_' and '-' (^[A-Za-z0-9._-]{1,64}$, checked
// without a regexp on every request).
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// requestScope is what observe keeps for one request, allocated at once:
// the status recorder, the context collecting the request's metrics and
// the X-Request-Id header's value. Waiting-room joins and status calls,
// the requests millions of fans send, pay one allocation for the three.
type requestScope struct {
	rec     web.StatusRecorder
	metrics metrics.Scope
	id      [1]string
}

// observe assigns a request id, recovers panics as problem JSON, caps the
// body size and writes one structured log line per request.
func (s *router) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			var b [8]byte
			rand.Read(b[:])
			id = hex.EncodeToString(b[:])
		}
		scope := &requestScope{rec: web.StatusRecorder{ResponseWriter: w}, id: [1]string{id}}
		w.Header()["X-Request-Id"] = scope.id[:] // Set("X-Request-Id", id), without its own slice
		rec := &scope.rec
		ctx, set := scope.metrics.Start(r.Context())
		r = r.WithContext(ctx)
		// An empty body (http.NoBody, as the Lambda adapter and net/http
		// give a bodiless request) cannot go over any limit.
		if r.Body != nil && r.Body != http.NoBody {
			limit := s.http.MaxBodyBytes
			if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/api/venues") && config.LayoutImportPath.MatchString(r.URL.Path) {
				limit = s.http.MaxLayoutBytes
			}
			r.Body = http.MaxBytesReader(rec, r.Body, limit)
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.mux.Fail(rec, r, fmt.Errorf("panic: %v", v))
			}
			if rec.Status >= 500 {
				set.Add(metrics.HTTP5xx, 1)
				// The control room's 5xx rate: a Redis call on failures only.
				if s.incidents != nil {
					web.Background(s.log, func(ctx context.Context) error { return s.incidents.CountIncident(ctx, queue.IncidentHTTP5xx) })
				}
			}
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "http", append([]slog.Attr{
				slog.String("request_id", id),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.Status),
				slog.Int("bytes", rec.Bytes),
				slog.Duration("duration", time.Since(start))}, set.Attrs()...)...)
		}()
		next.ServeHTTP(rec, r)
	})
}
