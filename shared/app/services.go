package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/outbox"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/ratelimit"
	"github.com/catraca/catraca/shared/shardstore"
)

// NewInventory is the inventory over db's shards; the seats it frees
// (releases, sweeps) are published to live seat maps.
func NewInventory(db *Databases, l *live.Hub, log *slog.Logger) *inventory.Service {
	show := showFreed(l, log)
	return inventory.New(db.Shards, inventory.OnFreed(func(f inventory.Freed) { show(shardstore.Freed(f)) }))
}

// showFreed publishes places given back (a release, a sweep, a refused
// payment's hold) to live seat maps.
func showFreed(l *live.Hub, log *slog.Logger) func(shardstore.Freed) {
	if log == nil {
		log = slog.Default()
	}
	return func(f shardstore.Freed) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		d := live.Delta{State: live.SeatAvailable, GA: f.GA}
		if len(f.Seats) > 0 {
			d.Seats = f.Seats
		}
		if err := l.Publish(ctx, f.EventID, d); err != nil {
			log.Warn("publish freed seats", "event", f.EventID, "err", err)
		}
	}
}

// Orders is what an order service is built from. A function leaves out
// what the calls it makes never reach: the webhook receiver has no PSP
// key, the PSP consumer no mailer.
type Orders struct {
	DB    *Databases
	Redis redis.UniversalClient
	Prefix,
	PublicURL string
	PSP config.PSP
	// TicketKey signs the codes of issued tickets (nil: issues none).
	TicketKey []config.Key
	Mailer    order.Mailer
	Queue     order.Queue
	// Outbox bounds the outbox worker's tries (fulfil).
	Outbox config.Outbox
	// Declines are the thresholds of declined payments (card testing).
	Declines config.Declines
	Log      *slog.Logger
}

// NewOrders returns the order service. A purchase frees the buyer's
// waiting-room slot and shows the seats sold on live maps.
func NewOrders(o Orders) *order.Service {
	var tickets *order.Signer
	if len(o.TicketKey) > 0 {
		tickets = order.NewSigner(o.TicketKey[0].Secret)
	}
	room, hub := queue.New(o.Redis, o.Prefix), live.New(o.Redis, o.Prefix)
	catalog := event.NewDirectory(o.DB.Catalog)
	return order.New(order.Config{Shards: o.DB.Shards, Catalog: o.DB.Catalog, PSP: psp.NewStripeKey(o.PSP.PSPURL, Secret("CATRACA_PSP_API_KEY", o.PSP.PSPAPIKey)),
		Limiter: ratelimit.New(o.Redis, o.Prefix), Queue: o.Queue, Rate: o.PSP.PSPRate, PublicURL: o.PublicURL,
		Tickets: tickets, Mailer: o.Mailer, Log: o.Log, Events: catalog.Get, Cancelled: catalog.CancelledSince,
		OutboxTries: o.Outbox.OutboxTries, RefundTries: o.Outbox.RefundTries,
		Strikes: strikes(o), Declines: declines(o.Declines), NoPix: o.PSP.PSPNoPix,
		NoCardLimit: o.Declines.NoCardLimit, NoClusterLimit: o.Declines.NoClusterLimit,
		Linked:        NewFairness(o.DB, o.Redis, o.Prefix, o.Declines, o.Log),
		CatalogTopics: catalogTopics(o),
		Addresses: func(ctx context.Context, account int64) (string, error) {
			return catalogstore.AccountEmail(ctx, o.DB.CatalogRO, account)
		},
		Freed:     showFreed(hub, o.Log),
		PSPFailed: func(ctx context.Context) { room.CountIncident(ctx, queue.IncidentPSP) }, // the control room's PSP errors
		Paid: func(eventID, account int64, seats []int) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			room.Leave(ctx, eventID, account) // the purchase frees the waiting-room slot
			if len(seats) > 0 {
				hub.Publish(ctx, eventID, live.Delta{Seats: seats, State: live.SeatSold})
			}
		}})
}

// catalogTopics are the catalog outbox's messages an order service with
// a mailer (fulfil's) sends besides the status copies: a drawn presale's
// mail.
func catalogTopics(o Orders) map[outbox.Topic]order.CatalogHandler {
	if o.Mailer == nil {
		return nil
	}
	return map[outbox.Topic]order.CatalogHandler{
		catalogstore.TopicPresaleMail: presale.Mailing{Mailer: o.Mailer, PublicURL: o.PublicURL}.Send,
	}
}

// NewFairness is the linked-accounts store (docs/fairness.md).
func NewFairness(db *Databases, rdb redis.UniversalClient, prefix string, c config.Declines, log *slog.Logger) *fairness.Service {
	return fairness.New(fairness.Config{Catalog: db.Catalog, Redis: rdb, Prefix: prefix, Window: c.VelocityWindow, Threshold: c.VelocityMax, Log: log})
}

// NewEntry is the door and transfer service; transfers are mailed to
// their recipients with links to publicURL.
func NewEntry(db *Databases, ticketKey []config.Key, mailer order.Mailer, publicURL string, fair *fairness.Service, log *slog.Logger) (*entry.Service, error) {
	ring, err := entry.NewRing(ticketKey)
	if err != nil {
		return nil, err
	}
	return entry.New(db.Catalog, db.Shards, ring, entry.OnSent(func(ctx context.Context, n entry.Sent) {
		// A payout of transfers links the sender and the recipient.
		if err := fair.LinkTransfer(ctx, n.FromID, n.To.ID); err != nil {
			log.Warn("transfer link", "ticket", n.Ticket, "err", err)
		}
		err := mailer.Send(ctx, order.Mail{Key: fmt.Sprintf("transfer-%d-%d", n.Ticket, n.Generation), To: n.To.Email,
			Subject: n.From + " sent you a ticket",
			Body:    fmt.Sprintf("%s sent you a ticket: %s.\n\nIt is yours now. Show it at the door from %s/tickets\n", n.From, n.Seat, publicURL)})
		if err != nil {
			log.Warn("transfer mail", "ticket", n.Ticket, "err", err)
		}
	})), nil
}

// strikes counts declined payments for the functions configured to (the
// API checks them, the webhook and the reconciler count them).
func strikes(o Orders) *ratelimit.Strikes {
	if o.Declines.DeclineWindow <= 0 {
		return nil
	}
	return ratelimit.NewStrikes(o.Redis, o.Prefix)
}

// declines are the configured thresholds of declined payments.
func declines(c config.Declines) order.Declines {
	policy := func(slow, block int) ratelimit.Policy {
		return ratelimit.Policy{Window: c.DeclineWindow, SlowAfter: slow, SlowDelay: c.DeclineSlowDelay, BlockAfter: block, BlockFor: c.DeclineBlockFor}
	}
	return order.Declines{Account: policy(c.AccountSlowAfter, c.AccountBlockAfter), Address: policy(c.AddressSlowAfter, c.AddressBlockAfter)}
}
