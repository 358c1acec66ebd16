package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/lambdatest"
	"github.com/catraca/catraca/tools/testenv"
)

// TestUnderRuntimeInterfaceEmulator builds the real bootstrap and invokes it
// with function-URL events, as Lambda would.
func TestUnderRuntimeInterfaceEmulator(t *testing.T) {
	t.Parallel()
	d := testenv.NewDatabases(t, 2)
	fn, _ := lambdatest.StartFunction(t, "api", testenv.Config(t, d), nil)

	request := func(method, path, body string) events.APIGatewayV2HTTPRequest {
		return lambdatest.URLRequest(method, path, body, nil)
	}

	var res events.APIGatewayV2HTTPResponse
	fn.Invoke(t, request(http.MethodGet, "/healthz", ""), &res)
	require.Equal(t, http.StatusOK, res.StatusCode, res.Body)

	fn.Invoke(t, request(http.MethodPost, "/api/accounts", `{"email":"rie@example.com","password":"lambda says hello","name":"Rie"}`), &res)
	require.Equal(t, http.StatusCreated, res.StatusCode, res.Body)
	var created struct {
		Account struct{ Email string } `json:"account"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Body), &created))
	require.Equal(t, "rie@example.com", created.Account.Email)

	fn.Invoke(t, request(http.MethodPost, "/api/accounts", `{"email":`), &res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, "application/problem+json", res.Headers["Content-Type"])

	// A buffered function cannot stream: the live stream is refused at
	// once (EventSource then polls the snapshot) instead of holding the
	// function for its whole timeout.
	start := time.Now()
	fn.Invoke(t, request(http.MethodGet, "/api/events/1/stream", ""), &res)
	require.Equal(t, http.StatusNotImplemented, res.StatusCode, res.Body)
	require.Contains(t, res.Body, "no-streaming")
	require.Less(t, time.Since(start), 5*time.Second)
}
