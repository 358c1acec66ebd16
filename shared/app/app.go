// Package app builds catraca's processes from their configuration: each
// Lambda takes the steps it needs (OpenDatabases, OpenRedis, NewInventory,
// NewOrders, NewEntry…) once, outside any handler; Open takes them all
// for the local stack and the API.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/admission"
	"github.com/catraca/catraca/shared/api/session"
	"github.com/catraca/catraca/shared/availability"
	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/searchindex"
	"github.com/catraca/catraca/shared/searchindex/snapstore"
	"github.com/catraca/catraca/shared/token"
)

// App is every client and service of one process (the local stack, the
// API Lambda).
type App struct {
	*Databases
	Config       config.Config
	Logger       *slog.Logger
	Redis        redis.UniversalClient
	Accounts     *account.Service
	Sessions     *token.Signer
	Admissions   *token.Signer
	Events       *event.Directory
	SearchIndex  *searchindex.Index // serves Events' searches when enabled (nil otherwise)
	Inventory    *inventory.Service
	Organizer    *organizer.Service
	Room         *queue.Room
	Tickets      *token.Signer
	ReadCache    *cache.Cache
	Availability *availability.Service
	Live         *live.Hub
	Orders       *order.Service
	Jobs         *order.LocalQueue
	TicketSigner *order.Signer
	Entry        *entry.Service
	Fairness     *fairness.Service
	Presale      *presale.Service
	// EmailLinks mail and check the links that verify accounts' emails.
	EmailLinks *session.EmailLinks
}

// Option adjusts how Open builds the app.
type Option func(*App)

// WithLogger makes every service log to l (JSON on stderr by default).
func WithLogger(l *slog.Logger) Option { return func(a *App) { a.Logger = l } }

// NewLogger is the JSON logger of a Lambda.
func NewLogger() *slog.Logger { return slog.New(slog.NewJSONHandler(os.Stderr, nil)) }

// Open connects everything cfg names.
func Open(ctx context.Context, cfg config.Config, options ...Option) (*App, error) {
	a := &App{Config: cfg, Logger: NewLogger()}
	for _, o := range options {
		o(a)
	}
	var err error
	if a.Databases, err = OpenDatabases(ctx, cfg.Database, cfg.Readers); err != nil {
		return nil, err
	}
	a.Redis = OpenRedis(cfg.Redis)
	if err := a.signers(); err != nil {
		a.Close()
		return nil, err
	}
	if err := a.services(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// signers reads the session, admission and queue-ticket signing keys.
func (a *App) signers() error {
	var err error
	if a.Sessions, err = token.NewSigner(token.AudienceSession, a.Config.SessionKeys); err != nil {
		return err
	}
	if a.Admissions, err = token.NewSigner(token.AudienceAdmission, a.Config.AdmissionKeys); err != nil {
		return err
	}
	a.Tickets, err = token.NewSigner(token.AudienceQueue, a.Config.AdmissionKeys)
	return err
}

// services builds the services over the databases and Redis.
func (a *App) services(ctx context.Context) error {
	cfg := a.Config
	var err error
	a.Accounts, err = account.NewService(pgstore.New(a.Catalog), account.Argon2{MemoryKiB: cfg.Argon2MemoryKiB, Time: cfg.Argon2Time})
	if err != nil {
		return err
	}
	a.Events = event.NewDirectory(a.CatalogRO)
	if cfg.SearchIndex {
		opt := searchindex.Options{MaxEvents: cfg.SearchMaxEvents, Log: a.Logger}
		if cfg.SearchSnapshot != "" {
			if opt.Snapshots, err = snapstore.Open(ctx, cfg.SearchSnapshot); err != nil {
				return err
			}
		}
		a.SearchIndex = searchindex.New(a.CatalogRO, opt)
		a.Events = a.Events.WithSearchIndex(a.SearchIndex)
	}
	a.Organizer = organizer.New(a.Catalog, a.Shards)
	a.Room = queue.New(a.Redis, cfg.RedisPrefix)
	a.ReadCache = cache.New(a.Redis, cfg.RedisPrefix)
	a.Availability = availability.New(a.Shards, a.ReadCache)
	a.Live = live.New(a.Redis, cfg.RedisPrefix)
	a.Inventory = NewInventory(a.Databases, a.Live, a.Logger)
	mailer, err := NewMailer(ctx, cfg.Mail, a.Logger)
	if err != nil {
		return err
	}
	a.Fairness = NewFairness(a.Databases, a.Redis, cfg.RedisPrefix, cfg.Declines, a.Logger)
	if a.Entry, err = NewEntry(a.Databases, cfg.TicketKey, mailer, cfg.PublicURL, a.Fairness, a.Logger); err != nil {
		return err
	}
	// The verification link is signed with the session keys under its
	// own audience: it is never a session.
	links, err := token.NewSigner(token.AudienceEmail, cfg.SessionKeys)
	if err != nil {
		return err
	}
	a.EmailLinks = &session.EmailLinks{Signer: links, Mailer: mailer, PublicURL: cfg.PublicURL}
	a.Presale = &presale.Service{DB: a.Catalog, Room: a.Room, Log: a.Logger,
		Cluster: func(ctx context.Context, account int64) (int64, error) {
			id, _, err := a.Fairness.Cluster(ctx, account)
			return id, err
		}}
	a.TicketSigner = order.NewSigner(cfg.TicketKey[0].Secret)
	a.Jobs = order.NewLocalQueue(100000)
	jobs, err := NewQueue(ctx, cfg.Queue, a.Jobs)
	if err != nil {
		return err
	}
	a.Orders = NewOrders(Orders{DB: a.Databases, Redis: a.Redis, Prefix: cfg.RedisPrefix, PublicURL: cfg.PublicURL,
		PSP: cfg.PSP, TicketKey: cfg.TicketKey, Mailer: mailer, Queue: jobs, Outbox: cfg.Outbox, Declines: cfg.Declines, Log: a.Logger})
	return nil
}

// admitInterval is the admission tick: short ticks hand freed slots on
// sooner and admit in small batches instead of a burst each second (the
// ceiling itself still adapts once a second).
const admitInterval = 250 * time.Millisecond

// abandonAfter drops a waiting fan silent this long: four missed heartbeats
// (the web app reads its status every 2.5 min while far from the front).
const abandonAfter = 10 * time.Minute

// Admission returns the admission controller over this app's clients.
func (a *App) Admission() *admission.Controller {
	return NewAdmission(a.Databases, a.Room, a.Inventory, a.Config.Room, a.Logger)
}

// NewAdmission is the waiting room's admission controller.
func NewAdmission(db *Databases, room *queue.Room, inv *inventory.Service, c config.Room, log *slog.Logger) *admission.Controller {
	return &admission.Controller{Room: room, Events: event.NewDirectory(db.Catalog), Inventory: inv,
		Log: log, Interval: admitInterval, Abandon: abandonAfter, AdmitDelay: c.RoomAdmitDelay, Owner: newOwnerID()}
}

func newOwnerID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Secrets are the secrets of keys (the PSP's webhook secrets).

// RunWorkers runs, until ctx ends, what AWS runs as queue consumers and
// schedules: PSP calls from the queue, fulfilment from the outbox,
// reconciliation with the PSP and the hold sweeper (with the search
// snapshot's builder, as the sweep function runs it).
func (a *App) RunWorkers(ctx context.Context) {
	a.Jobs.Run(ctx, 4, a.Orders, a.Logger)
	runWorkers(ctx, a.Logger, a.Orders, a.Orders, a.Inventory, a.snapshots(ctx))
	go sweepPresales(ctx, a.Presale, a.Logger)
}

// sweepPresales draws closed presales and re-writes their room gates, as
// the sweep function does (functions/sweep), until ctx ends.
func sweepPresales(ctx context.Context, p *presale.Service, log *slog.Logger) {
	Every(ctx, 5*time.Second, func(ctx context.Context) {
		if _, err := p.Sweep(ctx); err != nil {
			log.Warn("presale sweep", "err", err)
		}
	})
}

// snapshots is the search snapshot's builder over a's catalog reader, as
// the sweep function runs it (nil without a snapshot location).
func (a *App) snapshots(ctx context.Context) func(context.Context) {
	build, err := SearchSnapshotBuilder(ctx, a.Config.SearchSnapshots, a.CatalogRO, a.Logger)
	if err != nil {
		a.Logger.Warn("search snapshots", "err", err)
	}
	return build
}

// runWorkers runs the scheduled functions' work on their schedules; the
// sweeper's schedule also builds the search snapshot (snapshots, if set).
func runWorkers(ctx context.Context, log *slog.Logger, fulfil, reconcile *order.Service, sweep *inventory.Service, snapshots func(context.Context)) {
	logErr := func(what string, err error) {
		if err != nil {
			log.Warn(what, "err", err)
		}
	}
	go Every(ctx, 500*time.Millisecond, func(ctx context.Context) {
		_, err := fulfil.Fulfil(ctx)
		logErr("fulfil", err)
	})
	go Every(ctx, 30*time.Second, func(ctx context.Context) {
		_, err := reconcile.Reconcile(ctx, time.Now().Add(-time.Hour))
		logErr("reconcile", err)
	})
	go Every(ctx, 5*time.Second, func(ctx context.Context) {
		if snapshots != nil {
			snapshots(ctx)
		}
		_, err := sweep.SweepAll(ctx, 500)
		logErr("sweep", err)
	})
}

// Every runs fn each interval until ctx ends (the local stand-in for an
// EventBridge schedule).
func Every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// Close releases every client.
func (a *App) Close() {
	a.Databases.Close()
	if a.Redis != nil {
		a.Redis.Close()
	}
}
