// Package api is catraca's HTTP interface: one http.Handler served by the
// local stack and, through an adapter, by the Lambda functions. It is the
// router: each audience's handler group (session, read, room, sale,
// console, door, webhook, in the packages below) is built by the wiring
// with the services it uses and mounted here on one route table
// (web.Mux). Handlers return errors; translate turns them into RFC 9457
// problem JSON.
package api

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/catraca/catraca/shared/api/console"
	"github.com/catraca/catraca/shared/api/door"
	"github.com/catraca/catraca/shared/api/read"
	"github.com/catraca/catraca/shared/api/room"
	"github.com/catraca/catraca/shared/api/sale"
	"github.com/catraca/catraca/shared/api/session"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/api/webhook"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/shard"
)

// Group is a handler group: it registers its routes on the route table.
type Group interface {
	Mount(m *web.Mux)
}

// Config is the router's own: the log, the body limits, and the room
// that counts 5xx answers for the control room.
type Config struct {
	Log  *slog.Logger
	HTTP config.HTTP
	// Incidents counts 5xx answers (nil: not counted).
	Incidents *queue.Room
}

// router wraps the route table in observe and the path check.
type router struct {
	log       *slog.Logger
	http      config.HTTP
	incidents *queue.Room
	mux       *web.Mux
}

// New returns the API handler serving the routes of groups.
func New(c Config, groups ...Group) http.Handler {
	s := newRouter(c, groups)
	return s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux would answer a bodiless 307 to the cleaned path, or a
		// bodiless 400 to "GET *".
		if p := r.URL.Path; !strings.HasPrefix(p, "/") || strings.TrimSuffix(path.Clean(p), "/") != strings.TrimSuffix(p, "/") {
			s.mux.Fail(w, r, problem.New(http.StatusNotFound, "not-found", "No such endpoint: "+strconv.Quote(p)+". Write the path without //, /./ or /../."))
			return
		}
		s.mux.ServeHTTP(w, r)
	}))
}

func newRouter(c Config, groups []Group) *router {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	s := &router{log: c.Log, http: c.HTTP, incidents: c.Incidents, mux: web.NewMux(c.Log, translate)}
	for _, g := range groups {
		g.Mount(s.mux)
	}
	return s
}

// Routes lists the pattern ("METHOD /path/{param}") of every route of
// every group, in registration order.
func Routes() []string {
	return newRouter(Config{}, []Group{&Ops{}, &session.Handlers{}, &read.Handlers{}, &room.Handlers{}, &sale.Handlers{},
		&webhook.Handlers{}, &console.Handlers{}, &door.Handlers{}}).mux.Patterns()
}

// translate maps domain sentinels to problems; unknown errors stay 500.
func translate(err error) error {
	var p *problem.Error
	if errors.As(err, &p) {
		return err
	}
	for _, m := range []func(error) error{session.AccountError, sale.InventoryError, console.OrganizerError, sale.OrderError, door.EntryError, room.PresaleError} {
		if p := m(err); p != nil {
			return p
		}
	}
	switch {
	case errors.Is(err, event.ErrNotFound), errors.Is(err, shard.ErrUnknownEvent):
		return problem.New(http.StatusNotFound, "event-not-found", "No such event.")
	case errors.Is(err, event.ErrBadCursor), errors.Is(err, entry.ErrBadCursor):
		return problem.New(http.StatusBadRequest, "invalid-cursor", "The cursor is not valid; start from the first page.")
	case databaseUnavailable(err):
		p := problem.New(http.StatusServiceUnavailable, "temporarily-unavailable",
			"We could not reach our database for a moment. Try again in a few seconds; a retry with the same Idempotency-Key is safe.")
		p.RetryAfter = 2
		return p.Wrap(err)
	case transactionConflict(err):
		p := problem.New(http.StatusServiceUnavailable, "concurrent-change",
			"Another request changed the same tickets at the same moment, so this one did not complete. Try again; a retry with the same Idempotency-Key is safe.")
		p.RetryAfter = 1
		return p.Wrap(err)
	}
	return err
}

// transactionConflict tells a transaction PostgreSQL rolled back to break a
// deadlock (40P01) or a serialization conflict (40001): nothing of that
// transaction was written, and the same request again normally succeeds.
// Other class-40 errors (a commit whose outcome is unknown) stay 500s.
func transactionConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// databaseUnavailable tells a database that is down, restarting or failing
// over (which clients should retry) from a bug (which they should not).
func databaseUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-03: shutting down, crashed,
		// not accepting connections yet.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	// A connection the driver closed mid-transaction (ErrConnClosed) is
	// retryable too: a hold retried with its Idempotency-Key replays a
	// commit that did land.
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || pgconn.Timeout(err) || errors.Is(err, pgconn.ErrConnClosed) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}
