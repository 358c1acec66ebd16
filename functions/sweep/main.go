// Command sweep is the scheduled Lambda that releases expired holds on every
// shard (holds also expire lazily; this returns GA places and cancels the
// orders of fans who walked away).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
)

func main() {
	a := app.FromEnv()
	lambda.Start(func(ctx context.Context) (map[int]int, error) {
		return a.Inventory.SweepAll(ctx, 500)
	})
}
