// Command api is the Lambda behind CloudFront for every /api route and
// /healthz. It serves the same http.Handler as the local stack through a
// buffered adapter: VPC functions cannot stream function-URL responses.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/catraca/catraca/shared/app"
)

func main() {
	a := app.FromEnv()
	lambda.Start(httpadapter.NewV2(a.Handler()).ProxyWithContext)
}
