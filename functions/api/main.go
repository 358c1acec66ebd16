// Command api is the Lambda behind CloudFront for every /api route and
// /healthz. It serves the same http.Handler as the local stack through a
// buffered adapter: VPC functions cannot stream function-URL responses.
// It is the whole app but the PSP's webhooks (their own function) and the
// edge's key store (admit's).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
)

func main() {
	ctx := context.Background()
	c := app.MustLoad[config.API](ctx)
	a := app.Must(app.Open(ctx, config.Config{Site: c.Site, HTTP: c.HTTP, Database: c.Database, Readers: c.Readers,
		Redis: c.Redis, Sessions: c.Sessions, Passwords: c.Passwords, Admission: c.Admission, Tickets: c.Tickets,
		PSP: c.PSP, Queue: c.Queue, Mail: c.Mail}))
	lambda.Start(httpadapter.NewV2(a.Handler()).ProxyWithContext)
}
