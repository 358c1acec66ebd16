// Command fulfil drains the shards' outboxes: confirmation emails with the
// tickets for paid orders, and refunds of payments that lost their hold.
// Delivery is at least once; both effects are idempotent.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
)

func main() {
	cfg, err := config.Load()
	if err != nil {
		log.Fatal(err)
	}
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(func(ctx context.Context) (int, error) { return a.Orders.Fulfil(ctx) })
}
