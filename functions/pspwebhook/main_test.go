package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
	"github.com/stripe/stripe-go/v82"

	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/pspsim"
	"github.com/catraca/catraca/tools/testenv"
)

// TestOnlyWebhooksUnderEmulator invokes the built function as its public
// function URL would: signed webhooks reach the webhook code, and no
// other route of the API answers through this URL.
func TestOnlyWebhooksUnderEmulator(t *testing.T) {
	t.Parallel()
	cfg := testenv.Config(t, testenv.NewDatabases(t, 1))
	fn, _ := lambdatest.StartFunction(t, "pspwebhook", cfg, nil)
	request := func(method, path, body string, headers map[string]string) events.APIGatewayV2HTTPResponse {
		var res events.APIGatewayV2HTTPResponse
		fn.Invoke(t, lambdatest.URLRequest(method, path, body, headers), &res)
		return res
	}

	res := request(http.MethodPost, "/api/psp/webhook", `{"id":"evt_1"}`, map[string]string{"stripe-signature": "t=1,v1=00"})
	require.Equal(t, http.StatusBadRequest, res.StatusCode, res.Body)
	require.Contains(t, res.Body, "bad-signature")

	// A type the shop ignores: acknowledged without asking the PSP.
	body := `{"id":"evt_unknown","object":"event","api_version":"` + stripe.APIVersion + `","created":1,"type":"customer.created","data":{"object":{"id":"cus_1","object":"customer"}}}`
	sig := pspsim.Sign(cfg.PSPWebhookSecrets[0], time.Now(), []byte(body))
	res = request(http.MethodPost, "/api/psp/webhook", body, map[string]string{"stripe-signature": sig})
	require.Less(t, res.StatusCode, 500, res.Body)
	require.NotContains(t, res.Body, "bad-signature", "a signed webhook is accepted")

	for _, r := range [][2]string{{http.MethodGet, "/api/events"}, {http.MethodPost, "/api/accounts"}, {http.MethodGet, "/healthz"}} {
		res = request(r[0], r[1], `{}`, nil)
		require.Equal(t, http.StatusNotFound, res.StatusCode, "%s %s is not served on the webhook's public URL", r[0], r[1])
		require.Equal(t, "application/problem+json", res.Headers["Content-Type"])
	}
}
