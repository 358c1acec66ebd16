// Package stack runs the whole of catraca in one process, as make dev and
// the browser tests use it: the app behind the local CloudFront gateway
// (the real edge function), the admission ticker, the workers that stand in
// for queues and schedules, and the PSP simulator.
package stack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/edgekeys"
	"github.com/catraca/catraca/tools/gateway"
	"github.com/catraca/catraca/tools/pspsim"
)

// Options place the two listeners; empty means a free loopback port.
type Options struct {
	Addr, PSPAddr string
	PSPFaults     pspsim.Faults
	// ExternalPSP keeps the configuration's PSP (Stripe in test mode):
	// no simulator runs, and Sim is nil.
	ExternalPSP bool
	// AdmitInterval is the admission tick (the app's default when zero).
	AdmitInterval time.Duration
	Logger        *slog.Logger
	// Manual leaves the admission ticker and the scheduled workers
	// (fulfil, reconcile, sweep) to the caller, for tests that step time
	// themselves; the PSP call queue and the edge keys still run.
	Manual bool
	// BodyTimeout bounds the reading of a request's body
	// (DefaultBodyTimeout when zero).
	BodyTimeout time.Duration
}

// DefaultBodyTimeout is how long a client may take to send a request body.
const DefaultBodyTimeout = 30 * time.Second

// Stack is a running local catraca.
type Stack struct {
	// App logs in as the databases' owner: tests' fixtures and checks
	// reach past the functions through it.
	App *app.App
	// Functions serve and work as AWS runs them, each logged in as its
	// own database role (docs/database.md): the gateway calls the API
	// and pspwebhook, the workers and the admission ticker are theirs.
	Functions *app.Functions
	Sim       *pspsim.Sim
	KVS       *gateway.KVS
	URL       string // the gateway, as fans see it
	PSPURL    string
	stop      func()
	once      sync.Once
	done      chan struct{}
}

// Start opens the app on cfg (its public and PSP URLs are set to the
// listeners) and serves until ctx ends or Close is called.
func Start(ctx context.Context, cfg config.Config, o Options) (*Stack, error) {
	web, err := listen(o.Addr)
	if err != nil {
		return nil, err
	}
	s := &Stack{URL: "http://" + localhost(web.Addr()), PSPURL: cfg.PSPURL, done: make(chan struct{})}
	cfg.PublicURL = s.URL
	var pspL net.Listener
	if !o.ExternalPSP {
		if pspL, err = listen(o.PSPAddr); err != nil {
			web.Close()
			return nil, err
		}
		s.PSPURL, cfg.PSPURL = "http://"+localhost(pspL.Addr()), "http://"+pspL.Addr().String()
	}
	var opts []app.Option
	if o.Logger != nil {
		opts = append(opts, app.WithLogger(o.Logger))
	}
	// The owner's app serves no request (the functions run as their
	// roles): its pools stay cold.
	owner := cfg
	owner.DBMinConns = 0
	a, err := app.Open(ctx, owner, opts...)
	if err != nil {
		web.Close()
		if pspL != nil {
			pspL.Close()
		}
		return nil, err
	}
	s.App = a
	fns, err := app.OpenFunctions(ctx, cfg, a)
	if err != nil {
		a.Close()
		return nil, err
	}
	s.Functions = fns
	s.KVS = gateway.NewKVS(nil)
	gw, err := gateway.New(s.KVS, fns.Handler(), a.Logger)
	if err != nil {
		fns.Close()
		a.Close()
		return nil, err
	}
	servers := []*http.Server{{Handler: boundBody(gw, cmp.Or(o.BodyTimeout, DefaultBodyTimeout)), ReadHeaderTimeout: 10 * time.Second}}
	listeners := []net.Listener{web}
	if pspL != nil {
		s.Sim = pspsim.New(pspsim.Config{APIKey: cfg.PSPAPIKey, Secret: cfg.PSPWebhookSecrets[0],
			WebhookURL: "http://" + web.Addr().String() + "/api/psp/webhook", PublicURL: s.PSPURL, Faults: o.PSPFaults})
		servers = append(servers, &http.Server{Handler: boundBody(s.Sim, cmp.Or(o.BodyTimeout, DefaultBodyTimeout)), ReadHeaderTimeout: 10 * time.Second})
		listeners = append(listeners, pspL)
	}

	ctx, cancel := context.WithCancel(ctx)
	ctl := fns.Admission
	if o.AdmitInterval > 0 {
		ctl.Interval = o.AdmitInterval
	}
	if o.Manual {
		fns.API.Jobs.Run(ctx, 4, fns.PSPQueue, a.Logger)
	} else {
		go ctl.Run(ctx, time.Time{})
		fns.RunWorkers(ctx)
	}
	go app.Every(ctx, time.Second, s.publishKeys)
	s.publishKeys(ctx)

	for i, l := range listeners {
		go func() {
			if err := servers[i].Serve(l); !errors.Is(err, http.ErrServerClosed) {
				a.Logger.Error("serve", "addr", l.Addr().String(), "err", err)
			}
		}()
	}
	s.stop = func() {
		cancel()
		shutdown, done := context.WithTimeout(context.Background(), 3*time.Second)
		defer done()
		for _, srv := range servers {
			if srv.Shutdown(shutdown) != nil {
				srv.Close() // open event streams do not end by themselves
			}
		}
		if s.Sim != nil {
			s.Sim.Close()
		}
		fns.Close()
		a.Close()
		close(s.done)
	}
	go func() {
		<-ctx.Done()
		s.Close()
	}()
	return s, nil
}

// boundBody gives a request's body d to arrive: a client trickling it can
// no longer hold a connection forever. A server-wide ReadTimeout would also
// end event streams and long answers; this deadline covers only the body:
// net/http lifts it once the body is read whole (as it starts watching the
// connection for the client going away).
func boundBody(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		h.ServeHTTP(w, r)
	})
}

// SetRoomClock replaces the waiting room's clock everywhere it is read
// (the owner's app, which tests check through, and the functions), before
// the stack serves: tests step the room's time.
func (s *Stack) SetRoomClock(now func() time.Time) {
	s.App.Room.SetClock(now)
	s.Functions.SetRoomClock(now)
}

// PublishKeys brings the edge store up to date now (a manual stack's
// caller does it after creating an event with a waiting room).
func (s *Stack) PublishKeys(ctx context.Context) { s.publishKeys(ctx) }

// publishKeys keeps the edge store current: signing keys and the events
// whose waiting room is on (in AWS the admit function does the same with the
// real KeyValueStore).
func (s *Stack) publishKeys(ctx context.Context) {
	if err := edgekeys.Publish(ctx, s.Functions.Admission.Events, s.KVS, s.App.Config.SessionKeys, s.App.Config.AdmissionKeys, time.Now()); err != nil && ctx.Err() == nil {
		s.App.Logger.Warn("publish edge keys", "err", err)
	}
}

// Close stops everything once; later calls wait for the first.
func (s *Stack) Close() {
	s.once.Do(s.stop)
	<-s.done
}

func listen(addr string) (net.Listener, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// localhost names loopback listeners "localhost" so cookies and links read
// like the URL make dev prints.
func localhost(a net.Addr) string {
	return strings.Replace(a.String(), "127.0.0.1", "localhost", 1)
}

// WaitForRoom waits until the admission ticker has published the waiting
// room of a new event (it does within a tick or two); joins before that
// are refused with no-waiting-room.
func (s *Stack) WaitForRoom(ctx context.Context, event int64) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for {
		if p, err := s.App.Room.Progress(ctx, event); err == nil && p.Ceiling > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the waiting room of event %d was not published: %w", event, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
