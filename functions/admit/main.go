// Command admit is the waiting room's admission controller. EventBridge
// Scheduler invokes it every minute; each invocation ticks about once a
// second for just under a minute, so one runs at a time per schedule. Two
// overlapping invocations stay correct: every tick is one atomic script.
// Each invocation also brings the CloudFront KeyValueStore up to date
// (signing keys, events whose waiting room is on) for the edge function.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudfrontkeyvaluestore"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/edgekeys"
	"github.com/catraca/catraca/shared/edgekeys/cfkvs"
)

func main() {
	a := app.FromEnv()
	ctl := a.Admission()
	var store edgekeys.Store
	if arn := a.Config.EdgeKVSARN; arn != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(context.Background())
		if err != nil {
			a.Logger.Error("aws config", "err", err)
		} else {
			store = cfkvs.Store{API: cloudfrontkeyvaluestore.NewFromConfig(awsCfg), ARN: arn}
		}
	}
	lambda.Start(func(ctx context.Context) error {
		until := time.Now().Add(57 * time.Second)
		if d, ok := ctx.Deadline(); ok && d.Add(-2*time.Second).Before(until) {
			until = d.Add(-2 * time.Second)
		}
		if store != nil {
			// A failed sync keeps the previous contents: the edge still
			// verifies with the keys it has, and the origin re-checks.
			if err := edgekeys.Publish(ctx, a.Events, store, a.Config, time.Now()); err != nil {
				a.Logger.Error("publish edge keys", "err", err)
			}
		}
		ctl.Run(ctx, until)
		return nil
	})
}
