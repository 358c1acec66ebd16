// Command fulfil drains the shards' outboxes: confirmation emails with the
// tickets for paid orders, and refunds of payments that lost their hold;
// and the catalog's: copies of organizers' status changes to the shards,
// and the mail of drawn presales (winners' codes, the others' news).
// Delivery is at least once; every effect is idempotent.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.Fulfil](ctx)
	log := app.NewLogger()
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	mailer := app.Must(app.NewMailer(ctx, cfg.Mail, log))
	orders := app.NewOrders(app.Orders{DB: db, Redis: app.OpenRedis(cfg.Redis), Prefix: cfg.RedisPrefix,
		PublicURL: cfg.PublicURL, PSP: cfg.PSP, Mailer: mailer, Outbox: cfg.Outbox, Log: log})
	lambda.Start(func(ctx context.Context) (int, error) { return orders.Fulfil(ctx) })
}
