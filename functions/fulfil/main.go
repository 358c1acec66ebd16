// Command fulfil drains the shards' outboxes: confirmation emails with the
// tickets for paid orders, and refunds of payments that lost their hold.
// Delivery is at least once; both effects are idempotent.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
)

func main() {
	a := app.FromEnv()
	lambda.Start(func(ctx context.Context) (int, error) { return a.Orders.Fulfil(ctx) })
}
