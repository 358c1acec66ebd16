// Command pspwebhook receives the PSP's signed webhooks (CloudFront routes
// POST /api/psp/webhook here). It serves the shared handler, so signature
// checks, de-duplication and the order state machine are the same code as
// everywhere; it is a separate function so a webhook storm scales apart
// from the fans' API.
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
