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
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/queue"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.Sweep](ctx)
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	log := app.NewLogger()
	rdb := app.OpenRedis(cfg.Redis)
	inv := app.NewInventory(db, live.New(rdb, cfg.RedisPrefix), log)
	// Presales whose registration closed are drawn here when their
	// organizer did not. This function reads no address: its draw queues
	// every registration's mail in the catalog's outbox, which the fulfil
	// function sends.
	presales := &presale.Service{DB: db.Catalog, Room: queue.New(rdb, cfg.RedisPrefix), Log: log}
	snapshots := app.Must(app.SearchSnapshotBuilder(ctx, cfg.SearchSnapshots, db.Catalog, log))
	lambda.Start(func(ctx context.Context) (map[int]int, error) {
		snapshots(ctx)
		if _, err := presales.Sweep(ctx); err != nil {
			log.Warn("presale sweep", "err", err)
		}
		return inv.SweepAll(ctx, 500)
	})
}
