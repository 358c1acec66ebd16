// Command pspqueue consumes the SQS FIFO queue of PSP calls: each message is
// a payment attempt to create at the PSP. Its reserved concurrency is small
// and every call also spends from the shared rate limiter, so the PSP never
// sees more than its quota. Failed messages are reported one by one and
// come back after the visibility timeout (then to the dead-letter queue).
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/order"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.PSPQueue](ctx)
	log := app.NewLogger()
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	orders := app.NewOrders(app.Orders{DB: db, Redis: app.OpenRedis(cfg.Redis), Prefix: cfg.RedisPrefix,
		PublicURL: cfg.PublicURL, PSP: cfg.PSP, Log: log})
	lambda.Start(func(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
		var res events.SQSEventResponse
		for _, m := range e.Records {
			var j order.Job
			if err := json.Unmarshal([]byte(m.Body), &j); err != nil {
				log.Error("pspqueue: malformed job dropped", "id", m.MessageId, "err", err)
				continue
			}
			if err := orders.Create(ctx, j); err != nil {
				log.Warn("pspqueue: job failed", "order", j.OrderID, "err", err)
				res.BatchItemFailures = append(res.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return res, nil
	})
}
