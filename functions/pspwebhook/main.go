// Command pspwebhook receives the PSP's signed webhooks: CloudFront routes
// POST /api/psp/webhook to its public function URL (the PSP cannot sign
// for OAC; the HMAC signature is the authentication). It serves the shared
// handler, so signature checks, de-duplication and the order state machine
// are the same code as everywhere, but only that route: the URL is public
// and must not be a way around CloudFront to the rest of the API. A
// separate function also lets a webhook storm scale apart from the fans'.
package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/catraca/catraca/shared/api"
	"github.com/catraca/catraca/shared/api/webhook"
	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/psp"
	"github.com/catraca/catraca/shared/queue"
)

func main() {
	ctx := context.Background()
	cfg := app.MustLoad[config.PSPWebhook](ctx)
	log := app.NewLogger()
	db := app.Must(app.OpenDatabases(ctx, cfg.Database, config.Readers{}))
	rdb := app.OpenRedis(cfg.Redis)
	orders := app.NewOrders(app.Orders{DB: db, Redis: rdb, Prefix: cfg.RedisPrefix, PublicURL: cfg.PublicURL,
		TicketKey: cfg.TicketKey, PSP: cfg.PSP, Log: log, Declines: cfg.Declines})
	// Only the webhook route is reachable (webhookOnly), and it uses only
	// the orders (whose PSP key confirms each new event) and the webhook
	// secrets: no session key here.
	h := api.New(api.Config{Log: log, HTTP: cfg.HTTP, Incidents: queue.New(rdb, cfg.RedisPrefix)},
		&webhook.Handlers{Orders: orders,
			Webhooks: psp.NewWebhooks(app.Secret("CATRACA_PSP_WEBHOOK_SECRETS", strings.Join(cfg.PSPWebhookSecrets, ",")))})
	lambda.Start(httpadapter.NewV2(webhookOnly(h)).ProxyWithContext)
}

// webhookOnly passes POST /api/psp/webhook to api and answers 404 to the rest.
func webhookOnly(api http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/psp/webhook", func(w http.ResponseWriter, r *http.Request) {
		// The proxy adapter splits header values at commas, and the
		// signature has one (t=…,v1=…): join it back or nothing verifies.
		if v := r.Header.Values("Stripe-Signature"); len(v) > 1 {
			r.Header.Set("Stripe-Signature", strings.Join(v, ","))
		}
		api.ServeHTTP(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, r, problem.New(http.StatusNotFound, "not-found", "This address only takes the PSP's webhooks (POST /api/psp/webhook)."))
	})
	return mux
}
