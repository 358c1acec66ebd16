// Command reconcile replays the PSP's events of the last hour (scheduled):
// whatever a lost webhook left pending is applied; the rest are recorded
// duplicates.
package main

import (
	"context"
	"log"
	"time"

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
	lambda.Start(func(ctx context.Context) (int, error) {
		return a.Orders.Reconcile(ctx, time.Now().Add(-time.Hour))
	})
}
