package app

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/api"
	"github.com/catraca/catraca/shared/api/console"
	"github.com/catraca/catraca/shared/api/door"
	"github.com/catraca/catraca/shared/api/read"
	"github.com/catraca/catraca/shared/api/room"
	"github.com/catraca/catraca/shared/api/sale"
	"github.com/catraca/catraca/shared/api/session"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/api/webhook"
	"github.com/catraca/catraca/shared/controlroom"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/secret"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/shared/venue"
)

// Handler returns the API handler: each handler group built here with
// the services it uses, and nothing else.
func (a *App) Handler() http.Handler {
	log, cfg := a.Logger, a.Config
	auth := &web.Auth{Sessions: a.Sessions, Standing: a.Fairness, Roles: a.Accounts, PublicURL: cfg.PublicURL, Log: log}
	limits := &web.Throttle{Limiter: ratelimit.New(a.Redis, cfg.RedisPrefix), PerIP: cfg.AuthPerIP, Log: log}
	// One short cache of events for every group: a hold, a join and a
	// checkout each read the event, and 2 s of staleness is the read path's.
	events := event.NewCache(a.Events, 2*time.Second)
	venues := venue.NewStore(a.CatalogRO)
	return api.New(api.Config{Log: log, HTTP: cfg.HTTP, Incidents: a.Room},
		&api.Ops{Checks: a.healthChecks(), Outbox: a.Orders, Log: log},
		&session.Handlers{Accounts: a.Accounts, Auth: auth, Revocations: token.NewRevocations(a.Redis, cfg.RedisPrefix),
			Fairness: a.Fairness, Limits: limits, TTL: cfg.SessionTTL, Emails: a.EmailLinks},
		&read.Handlers{Events: a.Events, EventCache: events, Venues: venues, Availability: a.Availability,
			Live: a.Live, ReadCache: a.ReadCache, Presale: a.Presale, Log: log},
		&room.Handlers{Auth: auth, Room: a.Room, Admissions: a.Admissions, Tickets: a.Tickets, EventCache: events,
			Door: NewLineDoor(cfg, a.Redis, a.Fairness), Presale: a.Presale, Log: log},
		&sale.Handlers{Auth: auth, Gate: room.TokenGate{Signer: a.Admissions, Room: a.Room}, Inventory: a.Inventory,
			Seats: venue.NewStore(a.Catalog), EventCache: events, Orders: a.Orders, Room: a.Room, Live: a.Live, Log: log},
		NewWebhook(a.Orders, cfg.PSPWebhookSecrets),
		&console.Handlers{Auth: auth, Organizer: a.Organizer, Events: a.Events, EventCache: events,
			Venues: venues, Orders: a.Orders, Control: controlroom.New(a.Room, a.Shards), ReadCache: a.ReadCache,
			Fairness: a.Fairness, Presale: a.Presale},
		&door.Handlers{Auth: auth, Limits: limits, Entry: a.Entry},
	)
}

// NewWebhook is the PSP webhook's handler group, verifying with secrets
// (several during rotation).
func NewWebhook(orders *order.Service, secrets []string) *webhook.Handlers {
	return &webhook.Handlers{Orders: orders, Webhooks: psp.NewWebhooks(secret.Static(strings.Join(secrets, ",")))}
}

// healthChecks are /healthz's probes: the catalog, every shard and Redis.
func (a *App) healthChecks() map[string]func(context.Context) error {
	checks := map[string]func(context.Context) error{
		"catalog": a.Catalog.Ping,
		"redis":   func(ctx context.Context) error { return a.Redis.Ping(ctx).Err() },
	}
	for _, id := range a.Shards.IDs() {
		pool, _ := a.Shards.Pool(id)
		checks["shard-"+strconv.Itoa(id)] = pool.Ping
	}
	return checks
}
