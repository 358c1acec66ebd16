// Package app builds a catraca process from its configuration: database
// pools per shard, the Redis client, signers and services. Lambdas and the
// local stack call Open once, outside any handler.
package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/admission"
	"github.com/catraca/catraca/shared/api"
	"github.com/catraca/catraca/shared/availability"
	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/order/sesmail"
	"github.com/catraca/catraca/shared/order/sqsqueue"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/shared/venue"
)

// App owns the clients of one process.
type App struct {
	Config       config.Config
	Logger       *slog.Logger
	Catalog      *pgxpool.Pool
	CatalogRO    *pgxpool.Pool
	Shards       *shard.Router
	Redis        *redis.Client
	Accounts     *account.Service
	Sessions     *token.Signer
	Admissions   *token.Signer
	Events       *event.Directory
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
	PSP          psp.PSP
	pools        []*pgxpool.Pool
}

// FromEnv loads the configuration from the environment and opens the app;
// a Lambda's main calls it once, outside the handler, and exits on error.
func FromEnv() *App {
	cfg, err := LoadConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	a, err := Open(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	return a
}

// Option adjusts how Open builds the app.
type Option func(*App)

// WithLogger makes every service log to l (JSON on stderr by default).
func WithLogger(l *slog.Logger) Option { return func(a *App) { a.Logger = l } }

// Open connects everything cfg names. Connections are lazy: a Lambda cold
// start does not wait for every shard.
func Open(ctx context.Context, cfg config.Config, options ...Option) (*App, error) {
	a := &App{Config: cfg, Logger: slog.New(slog.NewJSONHandler(os.Stderr, nil))}
	for _, o := range options {
		o(a)
	}
	var err error
	if a.Catalog, err = a.pool(ctx, cfg.CatalogDSN, nil); err != nil {
		return nil, err
	}
	a.CatalogRO = a.Catalog
	if cfg.CatalogReadDSN != "" && cfg.CatalogReadDSN != cfg.CatalogDSN {
		if a.CatalogRO, err = a.pool(ctx, cfg.CatalogReadDSN, nil); err != nil {
			return nil, err
		}
	}
	primary, reader := map[int]*pgxpool.Pool{}, map[int]*pgxpool.Pool{}
	for id, dsn := range cfg.Shards {
		if primary[id], err = a.pool(ctx, dsn, shardstore.Warm); err != nil {
			return nil, fmt.Errorf("shard %d: %w", id, err)
		}
	}
	for id, dsn := range cfg.ShardReads {
		if reader[id], err = a.pool(ctx, dsn, nil); err != nil {
			return nil, fmt.Errorf("shard %d reader: %w", id, err)
		}
	}
	a.Shards = shard.New(a.Catalog, primary, reader)
	opts := &redis.Options{Addr: cfg.RedisAddr, DialTimeout: time.Second, ReadTimeout: time.Second,
		WriteTimeout: time.Second, MaxRetries: 1, PoolSize: 64}
	if cfg.RedisTLS {
		opts.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	a.Redis = redis.NewClient(opts)
	if a.Sessions, err = token.NewSigner(token.AudienceSession, cfg.SessionKeys); err != nil {
		return nil, err
	}
	if a.Admissions, err = token.NewSigner(token.AudienceAdmission, cfg.AdmissionKeys); err != nil {
		return nil, err
	}
	a.Accounts, err = account.NewService(pgstore.New(a.Catalog), account.Argon2{MemoryKiB: cfg.Argon2MemoryKiB, Time: cfg.Argon2Time})
	if err != nil {
		return nil, err
	}
	a.Events = event.NewDirectory(a.CatalogRO)
	a.Inventory = inventory.New(a.Shards)
	a.Organizer = organizer.New(a.Catalog, a.Shards)
	a.Room = queue.New(a.Redis, cfg.RedisPrefix)
	if a.Tickets, err = token.NewSigner(token.AudienceQueue, cfg.AdmissionKeys); err != nil {
		return nil, err
	}
	a.ReadCache = cache.New(a.Redis, cfg.RedisPrefix)
	a.Availability = availability.New(a.Shards, a.ReadCache)
	a.Live = live.New(a.Redis, cfg.RedisPrefix)
	a.Inventory.Freed = func(f inventory.Freed) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		d := live.Delta{State: "available", GA: f.GA}
		if len(f.Seats) > 0 {
			d.Seats = f.Seats
		}
		if err := a.Live.Publish(ctx, f.EventID, d); err != nil {
			a.Logger.Warn("publish freed seats", "event", f.EventID, "err", err)
		}
	}
	if len(cfg.TicketKey) == 0 || len(cfg.PSPWebhookSecrets) == 0 {
		return nil, errors.New("config: CATRACA_TICKET_KEY and CATRACA_PSP_WEBHOOK_SECRETS are required")
	}
	a.TicketSigner = order.NewSigner(cfg.TicketKey[0].Secret)
	ring, err := entry.NewRing(cfg.TicketKey)
	if err != nil {
		return nil, err
	}
	a.Entry = entry.New(a.Catalog, a.Shards, ring)
	a.PSP = psp.NewClient(cfg.PSPURL, cfg.PSPAPIKey)
	a.Jobs = order.NewLocalQueue(100000)
	var jobs order.Queue = a.Jobs
	var mailer order.Mailer = order.LogMailer{Log: a.Logger}
	if cfg.Mailbox != "" {
		mailer = order.FolderMailer{Dir: cfg.Mailbox}
	}
	if cfg.PSPQueueURL != "" || cfg.MailFrom != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
		}
		if cfg.PSPQueueURL != "" {
			jobs = sqsqueue.Queue{Client: sqs.NewFromConfig(awsCfg), URL: cfg.PSPQueueURL}
		}
		if cfg.MailFrom != "" {
			mailer = sesmail.Mailer{Client: sesv2.NewFromConfig(awsCfg), From: cfg.MailFrom}
		}
	}
	a.Orders = order.New(order.Config{Shards: a.Shards, PSP: a.PSP, Limiter: ratelimit.New(a.Redis, cfg.RedisPrefix),
		Queue: jobs, Rate: cfg.PSPRate, PublicURL: cfg.PublicURL, Tickets: a.TicketSigner, Mailer: mailer, Log: a.Logger,
		Events: event.NewDirectory(a.Catalog).Get,
		Addresses: func(ctx context.Context, account int64) (string, error) {
			var email string
			return email, a.CatalogRO.QueryRow(ctx, `SELECT email FROM accounts WHERE id = $1`, account).Scan(&email)
		}})
	a.Entry.Sent = func(ctx context.Context, n entry.Sent) {
		err := mailer.Send(ctx, order.Mail{Key: fmt.Sprintf("transfer-%d-%d", n.Ticket, n.Generation), To: n.Email,
			Subject: n.From + " sent you a ticket",
			Body:    fmt.Sprintf("%s sent you a ticket: %s.\n\nIt is yours now. Show it at the door from %s/tickets\n", n.From, n.Seat, cfg.PublicURL)})
		if err != nil {
			a.Logger.Warn("transfer mail", "ticket", n.Ticket, "err", err)
		}
	}
	a.Orders.Paid = func(eventID, account int64, seats []int) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		a.Room.Leave(ctx, eventID, account) // the purchase frees the waiting-room slot
		if len(seats) > 0 {
			a.Live.Publish(ctx, eventID, live.Delta{Seats: seats, State: "sold"})
		}
	}
	return a, nil
}

// pool opens a pool on dsn; warm, unless nil, prepares each new connection.
func (a *App) pool(ctx context.Context, dsn string, warm func(context.Context, *pgx.Conn) error) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, errors.New("invalid database DSN") // the DSN may hold a password: do not echo it
	}
	pc.MaxConns = a.Config.DBMaxConns
	pc.MinConns = min(a.Config.DBMinConns, pc.MaxConns)
	pc.MaxConnIdleTime = 5 * time.Minute
	pc.AfterConnect = warm
	p, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	a.pools = append(a.pools, p)
	return p, nil
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
	return &admission.Controller{Room: a.Room, Events: event.NewDirectory(a.Catalog), Inventory: a.Inventory,
		Log: a.Logger, Interval: admitInterval, Abandon: abandonAfter, AdmitDelay: a.Config.RoomAdmitDelay, Owner: newOwnerID()}
}

// Handler returns the API handler over this app's clients.
func (a *App) Handler() http.Handler {
	return api.New(api.Deps{
		Config: a.Config, Logger: a.Logger, Catalog: a.Catalog, Shards: a.Shards, Redis: a.Redis,
		Accounts: a.Accounts, Sessions: a.Sessions, Events: a.Events,
		Inventory: a.Inventory, Organizer: a.Organizer, Gate: api.TokenGate{Signer: a.Admissions, Room: a.Room},
		Room: a.Room, Admissions: a.Admissions, Tickets: a.Tickets,
		Venues: venue.NewStore(a.CatalogRO), Availability: a.Availability, Live: a.Live, ReadCache: a.ReadCache,
		Orders: a.Orders, TicketSigner: a.TicketSigner, Entry: a.Entry, WebhookSecrets: secrets(a.Config.PSPWebhookSecrets),
	})
}

func newOwnerID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func secrets(keys []config.Key) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = k.Secret
	}
	return out
}

// RunWorkers runs, until ctx ends, what AWS runs as queue consumers and
// schedules: PSP calls from the queue, fulfilment from the outbox,
// reconciliation with the PSP and the hold sweeper.
func (a *App) RunWorkers(ctx context.Context) {
	a.Jobs.Run(ctx, 4, a.Orders, a.Logger)
	logErr := func(what string, err error) {
		if err != nil {
			a.Logger.Warn(what, "err", err)
		}
	}
	go Every(ctx, 500*time.Millisecond, func(ctx context.Context) {
		_, err := a.Orders.Fulfil(ctx)
		logErr("fulfil", err)
	})
	go Every(ctx, 30*time.Second, func(ctx context.Context) {
		_, err := a.Orders.Reconcile(ctx, time.Now().Add(-time.Hour))
		logErr("reconcile", err)
	})
	go Every(ctx, 5*time.Second, func(ctx context.Context) {
		_, err := a.Inventory.SweepAll(ctx, 500)
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
	for _, p := range a.pools {
		p.Close()
	}
	if a.Redis != nil {
		a.Redis.Close()
	}
}
