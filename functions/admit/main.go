// Command admit is the waiting room's admission controller. EventBridge
// Scheduler invokes it every minute; each invocation ticks about once a
// second for just under a minute, so one runs at a time per schedule. Two
// overlapping invocations stay correct: every tick is one atomic script.
// Each invocation also brings the CloudFront KeyValueStore up to date
// (signing keys, events whose waiting room is on) for the edge function.
package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudfrontkeyvaluestore"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/edgekeys"
	"github.com/catraca/catraca/shared/edgekeys/cfkvs"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/queue"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.Admit](ctx)
	log := app.NewLogger()
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	rdb := app.OpenRedis(cfg.Redis)
	inv := app.NewInventory(db, live.New(rdb, cfg.RedisPrefix), log)
	ctl := app.NewAdmission(db, queue.New(rdb, cfg.RedisPrefix), inv, cfg.Room, log)
	events := event.NewDirectory(db.Catalog)
	store := edgeStore(ctx, cfg.Edge, log)
	lambda.Start(func(ctx context.Context) error {
		until := time.Now().Add(57 * time.Second)
		if d, ok := ctx.Deadline(); ok && d.Add(-2*time.Second).Before(until) {
			until = d.Add(-2 * time.Second)
		}
		if store != nil {
			// A failed sync keeps the previous contents: the edge still
			// verifies with the keys it has, and the origin re-checks.
			if err := edgekeys.Publish(ctx, events, store, cfg.SessionKeys, cfg.AdmissionKeys, time.Now()); err != nil {
				log.Error("publish edge keys", "err", err)
			}
		}
		ctl.Run(ctx, until)
		return nil
	})
}

// edgeStore is the CloudFront KeyValueStore of c, nil without one.
func edgeStore(ctx context.Context, c config.Edge, log *slog.Logger) edgekeys.Store {
	if c.EdgeKVSARN == "" {
		return nil
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		log.Error("aws config", "err", err)
		return nil
	}
	return cfkvs.Store{API: cloudfrontkeyvaluestore.NewFromConfig(awsCfg), ARN: c.EdgeKVSARN}
}
