// Command reconcile replays the PSP's events of the last hour (scheduled):
// whatever a lost webhook left pending is applied; the rest are recorded
// duplicates.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
)

func main() {
	a := app.FromEnv()
	lambda.Start(func(ctx context.Context) (int, error) {
		return a.Orders.Reconcile(ctx, time.Now().Add(-time.Hour))
	})
}
