// Command api is the Lambda behind CloudFront for every /api route and
// /healthz. It serves the same http.Handler as the local stack through a
// buffered adapter: VPC functions cannot stream function-URL responses.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

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
	lambda.Start(httpadapter.NewV2(a.Handler()).ProxyWithContext)
}
