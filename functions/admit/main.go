// Command admit is the waiting room's admission controller. EventBridge
// Scheduler invokes it every minute; each invocation ticks about once a
// second for just under a minute, so one runs at a time per schedule. Two
// overlapping invocations stay correct: every tick is one atomic script.
package main

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/catraca/catraca/shared/app"
)

func main() {
	a := app.FromEnv()
	ctl := a.Admission()
	lambda.Start(func(ctx context.Context) error {
		until := time.Now().Add(57 * time.Second)
		if d, ok := ctx.Deadline(); ok && d.Add(-2*time.Second).Before(until) {
			until = d.Add(-2 * time.Second)
		}
		ctl.Run(ctx, until)
		return nil
	})
}
