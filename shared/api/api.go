// Package api is catraca's HTTP interface: one http.Handler served by the
// local stack and, through an adapter, by the Lambda functions. Handlers
// return errors; one adapter turns them into RFC 9457 problem JSON.
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
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/availability"
	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/challenge"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/controlroom"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/shared/secret"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/shared/venue"
)

// Deps are the clients the handlers use, built once per process.
type Deps struct {
	Config    config.Config
	Logger    *slog.Logger
	Catalog   *pgxpool.Pool
	Shards    *shard.Router
	Redis     redis.UniversalClient
	Accounts  *account.Service
	Sessions  *token.Signer
	Events    *event.Directory
	Inventory *inventory.Service
	Organizer *organizer.Service
	// Gate guards the sale path of waiting-room events; TokenGate by default.
	Gate         Gate
	Room         *queue.Room
	Admissions   *token.Signer
	Tickets      *token.Signer
	Venues       *venue.Store
	Availability *availability.Service
	Live         *live.Hub
	ReadCache    *cache.Cache
	Orders       *order.Service
	TicketSigner *order.Signer
	Entry        *entry.Service
	// WebhookSecrets verify PSP webhooks (several during rotation).
	WebhookSecrets []string
	// Webhooks, when set, verifies them instead, with secrets re-read
	// when they rotate (pspwebhook on AWS).
	Webhooks *psp.Webhooks
	// Challenge, when set, replaces the configured waiting-room challenge;
	// Velocity flags accounts buying across events (none by default).
	Challenge challenge.Port
	Velocity  risk.VelocityPort
	// Fairness links accounts, blocks them and counts their purchases
	// (docs/fairness.md); nil in functions that serve no fan.
	Fairness *fairness.Service
	// Presale runs verified-fan presales (presale.go).
	Presale *presale.Service
}

// Server holds the dependencies of the handlers.
type Server struct {
	cfg          config.Config
	log          *slog.Logger
	catalog      *pgxpool.Pool
	shards       *shard.Router
	redis        redis.UniversalClient
	accounts     *account.Service
	sessions     *token.Signer
	events       *event.Directory
	eventCache   *event.Cache
	inventory    *inventory.Service
	organizer    *organizer.Service
	gate         Gate
	room         *queue.Room
	admissions   *token.Signer
	tickets      *token.Signer
	venues       *venue.Store
	availability *availability.Service
	live         *live.Hub
	readCache    *cache.Cache
	orders       *order.Service
	ticketSigner *order.Signer
	entry        *entry.Service
	control      *controlroom.Service
	webhooks     *psp.Webhooks
	fair         *fairness.Service
	limiter      *ratelimit.Limiter
	line         *lineDoor
	presale      *presale.Service
	gzip         gzipMemo
	mux          *http.ServeMux
	// patterns are the registered routes, for Routes.
	patterns []string
}

// New returns the API handler.
func New(d Deps) http.Handler {
	s := newServer(d)
	return s.observe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux would answer a bodiless 307 to the cleaned path, or a
		// bodiless 400 to "GET *".
		if p := r.URL.Path; !strings.HasPrefix(p, "/") || strings.TrimSuffix(path.Clean(p), "/") != strings.TrimSuffix(p, "/") {
			s.fail(w, r, problem.New(http.StatusNotFound, "not-found", "No such endpoint: "+strconv.Quote(p)+". Write the path without //, /./ or /../."))
			return
		}
		s.mux.ServeHTTP(w, r)
	}))
}

// newServer builds the server and registers its routes.
func newServer(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	s := &Server{cfg: d.Config, log: d.Logger, catalog: d.Catalog, shards: d.Shards, redis: d.Redis,
		accounts: d.Accounts, sessions: d.Sessions, events: d.Events, eventCache: event.NewCache(d.Events, 2*time.Second),
		inventory: d.Inventory, organizer: d.Organizer, gate: d.Gate, room: d.Room, admissions: d.Admissions,
		tickets: d.Tickets, venues: d.Venues, availability: d.Availability, live: d.Live, readCache: d.ReadCache,
		orders: d.Orders, ticketSigner: d.TicketSigner, entry: d.Entry, control: controlroom.New(d.Room, d.Shards), webhooks: d.Webhooks, fair: d.Fairness,
		limiter: ratelimit.New(d.Redis, d.Config.RedisPrefix), mux: http.NewServeMux(), presale: d.Presale}
	s.line = newLineDoor(d.Config, d.Redis, d.Challenge, d.Velocity)
	if s.presale == nil { // no mailer: winners read their code on their page
		s.presale = &presale.Service{DB: d.Catalog, Room: d.Room, Log: d.Logger}
	}
	if s.webhooks == nil {
		s.webhooks = psp.NewWebhooks(secret.Static(strings.Join(d.WebhookSecrets, ",")))
	}
	s.route("GET /healthz", s.health)
	s.route("GET /api/openapi.json", s.openAPI)
	s.route("POST /api/accounts", s.signUp)
	s.route("POST /api/session", s.logIn)
	s.route("DELETE /api/session", s.logOut)
	s.route("GET /api/events", s.listEvents)
	s.route("GET /api/events/{id}", s.getEvent)
	s.route("POST /api/events/{id}/holds", s.createHold)
	s.route("GET /api/holds/{id}", s.getHold)
	s.route("DELETE /api/holds/{id}", s.releaseHold)
	s.route("GET /api/events/{id}/availability", s.getAvailability)
	s.route("GET /api/events/{id}/stream", s.stream)
	s.route("GET /api/venues/{id}/layouts/{version}", s.getLayout)
	s.route("POST /api/events/{id}/queue", s.joinQueue)
	s.route("GET /api/events/{id}/queue", s.queueStatus)
	s.route("DELETE /api/events/{id}/queue", s.leaveQueue)
	s.route("GET /api/events/{id}/queue/progress", s.queueProgress)
	s.route("POST /api/orders/{id}/checkout", s.checkout)
	s.route("GET /api/orders/{id}", s.getOrder)
	s.route("GET /api/me/orders", s.myOrders)
	s.route("POST /api/psp/webhook", s.pspWebhook)
	s.route("POST /api/venues", s.importLayout)
	s.route("POST /api/venues/{id}/layouts", s.importLayout)
	s.route("GET /api/venues", s.listVenues)
	s.route("GET /api/venues/{id}/layouts", s.listLayouts)
	s.route("GET /api/organizer/events", s.organizerEvents)
	s.route("GET /api/organizer/events/{id}", s.organizerEvent)
	s.route("PATCH /api/events/{id}", eventChange(s, s.updateEvent))
	s.route("GET /api/events/{id}/refunds", s.eventRefunds)
	s.route("POST /api/events", s.createEvent)
	s.route("PUT /api/events/{id}/status", eventChange(s, s.changeEventStatus))
	s.route("PUT /api/events/{id}/price-levels", eventChange(s, s.organizer.SetPriceLevels))
	s.route("PUT /api/events/{id}/waiting-room", eventChange(s, s.setWaitingRoom))
	s.entryRoutes()
	s.consoleRoutes()
	s.fairnessRoutes()
	s.presaleRoutes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if allow := s.allowed(r); allow != "" {
			w.Header().Set("Allow", allow)
			s.fail(w, r, problem.New(http.StatusMethodNotAllowed, "method-not-allowed",
				r.Method+" is not allowed on "+r.URL.Path+"; use "+allow+"."))
			return
		}
		s.fail(w, r, problem.New(http.StatusNotFound, "not-found", "No such endpoint: "+r.Method+" "+r.URL.Path+"."))
	})
	return s
}

// allowed lists the methods the path of r has routes for, "" if none: a
// known path asked with another method is a 405 with Allow (RFC 9110), not
// a 404.
func (s *Server) allowed(r *http.Request) string {
	var methods []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if _, pattern := s.mux.Handler(&http.Request{Method: m, URL: r.URL, Host: r.Host}); pattern != "/" {
			methods = append(methods, m)
		}
	}
	return strings.Join(methods, ", ")
}

// handlerFunc is a handler that may fail; route translates its errors.
type handlerFunc func(http.ResponseWriter, *http.Request) error

func (s *Server) route(pattern string, h handlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		err := validQuery(r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			s.fail(w, r, translate(err))
		}
	})
}

// fail logs a problem with its cause and sends it.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	p := problem.From(err)
	problem.Log(s.log, r, p)
	problem.Write(w, r, p)
}

// translate maps domain sentinels to problems; unknown errors stay 500.
func translate(err error) error {
	var p *problem.Error
	if errors.As(err, &p) {
		return err
	}
	for _, m := range []func(error) error{accountError, inventoryError, organizerError, orderError, entryError} {
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

// refused answers a domain's refusal in the domain's own words: the detail
// is its message as written, and the errors member lists each reason with
// the JSON pointer it concerns, for forms that show errors beside fields.
func refused(err error, status int, code string) *problem.Error {
	var r *reject.Error
	if !errors.As(err, &r) {
		// A bare sentinel: the domain forgot its message; invent none.
		return problem.New(status, code, "This request cannot be accepted.").Wrap(err)
	}
	return problem.New(status, code, r.Detail()).With("errors", r.Reasons).Wrap(err)
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

// pathID parses a positive integer path value written canonically (no
// leading zeros or sign), so one resource has one URL, as at the edge.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != r.PathValue(name) {
		return 0, problem.New(http.StatusNotFound, "not-found", "No such "+name+": "+strconv.Quote(r.PathValue(name))+".")
	}
	return id, nil
}

// queryLimit reads parameter limit, between 1 and most (def when absent);
// unit names what is counted, for the message.
func queryLimit(r *http.Request, def, most int, unit string) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > most {
		return 0, problem.New(http.StatusBadRequest, "invalid-parameter",
			strings.TrimSpace("Parameter limit must be between 1 and "+strconv.Itoa(most)+" "+unit)+".")
	}
	return n, nil
}

// queryTime parses an RFC 3339 (or YYYY-MM-DD) query parameter.
func queryTime(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		// The zero time means "no bound" to the filter: to=0001-01-01
		// would have listed every event instead of none.
		if t.Year() < 1970 {
			return time.Time{}, problem.New(http.StatusBadRequest, "invalid-parameter",
				"Parameter "+name+" must be a time from 1970 on; leave it out for no bound.")
		}
		return t, nil
	}
	return time.Time{}, problem.New(http.StatusBadRequest, "invalid-parameter",
		"Parameter "+name+" must be an RFC 3339 time or a YYYY-MM-DD date.")
}
