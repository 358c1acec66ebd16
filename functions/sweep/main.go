// Command sweep is the scheduled Lambda that releases expired holds on every
// shard (holds also expire lazily; this returns GA places and cancels the
// orders of fans who walked away), and every 10 minutes builds the search
// index's snapshot that new API instances start from.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/live"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.Sweep](ctx)
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	log := app.NewLogger()
	inv := app.NewInventory(db, live.New(app.OpenRedis(cfg.Redis), cfg.RedisPrefix), log)
	snapshots := app.Must(app.SearchSnapshotBuilder(ctx, cfg.SearchSnapshots, db.Catalog, log))
	lambda.Start(func(ctx context.Context) (map[int]int, error) {
		snapshots(ctx)
		return inv.SweepAll(ctx, 500)
	})
}
