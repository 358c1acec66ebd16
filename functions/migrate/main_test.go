package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/lambdatest"
)

// TestAnswersCloudFormationWhenConfigFails runs the built custom resource
// without its database settings: it must still PUT a FAILED response to
// CloudFormation, with the reason, and let deletes succeed.
func TestAnswersCloudFormationWhenConfigFails(t *testing.T) {
	t.Parallel()
	answers := make(chan cfn.Response, 2)
	cf := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var res cfn.Response
		b, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(b, &res))
		answers <- res
	}))
	t.Cleanup(cf.Close)
	fn := lambdatest.Start(t, lambdatest.Build(t, "./functions/migrate"), map[string]string{"CATRACA_CATALOG_DSN": ""})

	for _, c := range []struct {
		request, status string
	}{{"Create", "FAILED"}, {"Delete", "SUCCESS"}} {
		var out any
		fn.Invoke(t, cfn.Event{RequestType: cfn.RequestType(c.request), RequestID: "r1", ResponseURL: cf.URL, StackID: "arn:aws:cloudformation:eu-west-1:123456789012:stack/test-ops/1",
			LogicalResourceID: "MigrateCatalog", PhysicalResourceID: "catraca-catalog", ResourceProperties: map[string]any{"Kind": "catalog"}}, &out)
		select {
		case res := <-answers:
			require.Equal(t, c.status, string(res.Status), res.Reason)
			if c.status == "FAILED" {
				require.Contains(t, res.Reason, "CATRACA_CATALOG_DSN")
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no answer to CloudFormation", c.request)
		}
	}
}
