// Command reconcile replays the PSP's events of the last hour (scheduled):
// whatever a lost webhook left pending is applied; the rest are recorded
// duplicates.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/psp"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.Reconcile](ctx)
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	orders := app.NewOrders(app.Orders{DB: db, Redis: app.OpenRedis(cfg.Redis), Prefix: cfg.RedisPrefix,
		PSP: cfg.PSP, TicketKey: cfg.TicketKey, Log: app.NewLogger(), Declines: cfg.Declines})
	key, log := app.Secret("CATRACA_PSP_API_KEY", cfg.PSPAPIKey), app.NewLogger()
	lambda.Start(func(ctx context.Context) (int, error) {
		// Until Stripe's key replaces the generated one (docs/deploy.md)
		// every run would fail and fill the dead-letter queue: skip.
		if psp.Placeholder(cfg.PSPURL, key.Get(ctx)) {
			log.Warn("reconcile skipped: CATRACA_PSP_API_KEY is still the deployment's placeholder, not a Stripe key (docs/deploy.md)")
			return 0, nil
		}
		return orders.Reconcile(ctx, time.Now().Add(-time.Hour))
	})
}
