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
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.Reconcile](ctx)
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	orders := app.NewOrders(app.Orders{DB: db, Redis: app.OpenRedis(cfg.Redis), Prefix: cfg.RedisPrefix,
		PSP: cfg.PSP, TicketKey: cfg.TicketKey, Log: app.NewLogger(), Declines: cfg.Declines})
	lambda.Start(func(ctx context.Context) (int, error) {
		return orders.Reconcile(ctx, time.Now().Add(-time.Hour))
	})
}
