package app

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/admission"
	"github.com/catraca/catraca/shared/api"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/queue"
)

// Functions are the deployed functions' parts, each built as its Lambda
// builds it and over databases it logs in to as its own role
// (config.DBRole), for the local stack: a grant a function lacks fails
// here as it would in AWS.
type Functions struct {
	// API is the api function's app (its Handler serves every route but
	// the PSP's webhooks; its Jobs queue the PSP calls).
	API                         *App
	Webhook                     http.Handler // pspwebhook
	Admission                   *admission.Controller
	Sweep                       *inventory.Service
	Presales                    *presale.Service
	Fulfil, Reconcile, PSPQueue *order.Service
	snapshots                   func(context.Context) // the sweep's search snapshot builder
	dbs                         []*Databases
}

// As is cfg for function fn: its pools log in as fn's database role.
func As(cfg config.Config, fn string) config.Config {
	cfg.DBUser = config.DBRole(fn)
	return cfg
}

// OpenFunctions opens every function of cfg as its role; a's Redis and
// logger are shared.
func OpenFunctions(ctx context.Context, cfg config.Config, a *App) (*Functions, error) {
	f := &Functions{}
	var err error
	if f.API, err = Open(ctx, As(cfg, "api"), WithLogger(a.Logger)); err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	db := func(fn string) *Databases {
		if err != nil {
			return nil
		}
		var d *Databases
		// Background functions open their connections when they need
		// them: warmed (DBMinConns) they would hold server slots the
		// API's pools need, all on one local server.
		c := As(cfg, fn)
		c.DBMinConns = 0
		if d, err = OpenDatabases(ctx, c.Database, config.Readers{}); err != nil {
			err = fmt.Errorf("%s: %w", fn, err)
			return nil
		}
		f.dbs = append(f.dbs, d)
		return d
	}
	log, rdb, prefix := a.Logger, a.Redis, cfg.RedisPrefix
	hub := live.New(rdb, prefix)
	// As each function's main builds its parts (functions/*/main.go).
	admit, sweep, webhook, pspqueue, fulfil, reconcile :=
		db("admit"), db("sweep"), db("pspwebhook"), db("pspqueue"), db("fulfil"), db("reconcile")
	if err != nil {
		f.Close()
		return nil, err
	}
	f.Admission = NewAdmission(admit, queue.New(rdb, prefix), NewInventory(admit, hub, log), cfg.Room, log)
	f.Sweep = NewInventory(sweep, hub, log)
	f.Presales = &presale.Service{DB: sweep.Catalog, Room: queue.New(rdb, prefix), Log: log} // as functions/sweep: its draws' mail goes through the outbox
	if f.snapshots, err = SearchSnapshotBuilder(ctx, cfg.SearchSnapshots, sweep.CatalogRO, log); err != nil {
		f.Close()
		return nil, err
	}
	hooks := NewOrders(Orders{DB: webhook, Redis: rdb, Prefix: prefix, PublicURL: cfg.PublicURL,
		TicketKey: cfg.TicketKey, PSP: cfg.PSP, Log: log, Declines: cfg.Declines})
	f.Webhook = api.New(api.Config{Log: log, HTTP: cfg.HTTP, Incidents: queue.New(rdb, prefix)}, NewWebhook(hooks, cfg.PSPWebhookSecrets))
	f.PSPQueue = NewOrders(Orders{DB: pspqueue, Redis: rdb, Prefix: prefix, PublicURL: cfg.PublicURL, PSP: cfg.PSP, Log: log})
	mailer, mailErr := NewMailer(ctx, cfg.Mail, log)
	if mailErr != nil {
		f.Close()
		return nil, mailErr
	}
	f.Fulfil = NewOrders(Orders{DB: fulfil, Redis: rdb, Prefix: prefix, PublicURL: cfg.PublicURL, PSP: cfg.PSP,
		Mailer: mailer, Outbox: cfg.Outbox, Log: log})
	f.Reconcile = NewOrders(Orders{DB: reconcile, Redis: rdb, Prefix: prefix, PSP: cfg.PSP, TicketKey: cfg.TicketKey,
		Log: log, Declines: cfg.Declines})
	return f, nil
}

// SetRoomClock replaces the waiting room's clock in every function that
// reads it (the API's joins and heartbeats, the admission ticker), before
// they serve: tests step the room's time.
func (f *Functions) SetRoomClock(now func() time.Time) {
	f.API.Room.SetClock(now)
	f.Admission.Room.SetClock(now)
}

// Handler routes as CloudFront does: the PSP's webhooks to pspwebhook,
// everything else to the API.
func (f *Functions) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /api/psp/webhook", f.Webhook)
	mux.Handle("/", f.API.Handler())
	return mux
}

// RunWorkers runs, until ctx ends, what AWS runs as queue consumers and
// schedules, each as its function: PSP calls from the API's queue,
// fulfilment, reconciliation and the sweeper.
func (f *Functions) RunWorkers(ctx context.Context) {
	f.API.Jobs.Run(ctx, 4, f.PSPQueue, f.API.Logger)
	runWorkers(ctx, f.API.Logger, f.Fulfil, f.Reconcile, f.Sweep, f.snapshots)
	go sweepPresales(ctx, f.Presales, f.API.Logger)
}

// Close closes every function's pools.
func (f *Functions) Close() {
	for _, d := range f.dbs {
		d.Close()
	}
	if f.API != nil {
		f.API.Close()
	}
}
