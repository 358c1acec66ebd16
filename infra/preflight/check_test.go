package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/stretchr/testify/require"
)

// fakeAWS answers the three read-only calls preflight makes, in the
// protocols the SDK speaks: Lambda's and SES v2's REST-JSON, RDS's query
// protocol with its XML answer.
type fakeAWS struct {
	concurrency, unreserved int
	production, sending     bool
	versions                []string // Aurora PostgreSQL versions offered
	calls                   []string
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && r.URL.Path == "/2016-08-19/account-settings":
		f.calls = append(f.calls, "lambda:GetAccountSettings")
		json.NewEncoder(w).Encode(map[string]any{"AccountLimit": map[string]any{
			"ConcurrentExecutions": f.concurrency, "UnreservedConcurrentExecutions": f.unreserved}})
	case r.Method == "GET" && r.URL.Path == "/v2/email/account":
		f.calls = append(f.calls, "ses:GetAccount")
		json.NewEncoder(w).Encode(map[string]any{"ProductionAccessEnabled": f.production, "SendingEnabled": f.sending})
	case r.Method == "POST" && r.URL.Path == "/":
		b, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(b))
		if form.Get("Action") != "DescribeDBEngineVersions" || form.Get("Engine") != "aurora-postgresql" {
			http.Error(w, "unexpected "+string(b), http.StatusBadRequest)
			return
		}
		f.calls = append(f.calls, "rds:DescribeDBEngineVersions")
		var versions strings.Builder
		for _, v := range f.versions {
			if v == form.Get("EngineVersion") {
				fmt.Fprintf(&versions, "<DBEngineVersion><Engine>aurora-postgresql</Engine><EngineVersion>%s</EngineVersion></DBEngineVersion>", v)
			}
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<DescribeDBEngineVersionsResponse xmlns="http://rds.amazonaws.com/doc/2014-10-31/"><DescribeDBEngineVersionsResult><DBEngineVersions>%s</DBEngineVersions></DescribeDBEngineVersionsResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeDBEngineVersionsResponse>`, versions.String())
	default:
		http.Error(w, "no such call: "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}
}

func clients(t *testing.T, f *fakeAWS) Clients {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "eu-north-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), BaseEndpoint: aws.String(srv.URL)}
	return Clients{Lambda: lambda.NewFromConfig(cfg), SES: sesv2.NewFromConfig(cfg), RDS: rds.NewFromConfig(cfg)}
}

func levels(fs []Finding) map[string]string {
	out := map[string]string{}
	for _, f := range fs {
		out[f.Check] = f.Level
	}
	return out
}

// TestPreflight: the default quota of 1,000 cannot take apiConcurrency=900
// with admit's and the PSP consumer's reservations (Lambda keeps 100
// unreserved); SES in the sandbox fails a deployment that mails; an
// Aurora version the region lacks fails; a region without Origin Shield
// is fine (the stacks use the nearest).
func TestPreflight(t *testing.T) {
	ctx := context.Background()
	settings := map[string]string{"region": "eu-north-1", "apiConcurrency": "900", "admitConcurrency": "2", "pspConcurrency": "5", "mailFrom": "tickets@example.com"}
	f := &fakeAWS{concurrency: 1000, unreserved: 1000, production: false, sending: true, versions: []string{"15.4"}}
	got := Check(ctx, clients(t, f), settings)
	require.Equal(t, map[string]string{"concurrency": "FAIL", "ses": "FAIL", "aurora": "FAIL", "origin-shield": "ok"}, levels(got), "%v", got)
	require.True(t, Failed(got))
	require.Contains(t, got[0].Text, "reserve 907")
	require.Contains(t, got[0].Text, "lower apiConcurrency to at most 893")
	require.ElementsMatch(t, []string{"lambda:GetAccountSettings", "ses:GetAccount", "rds:DescribeDBEngineVersions"}, f.calls, "read-only calls, one each")

	f = &fakeAWS{concurrency: 3000, unreserved: 3000, production: true, sending: true, versions: []string{"15.4", "16.4"}}
	got = Check(ctx, clients(t, f), settings)
	require.False(t, Failed(got), "%v", got)

	f.unreserved = 1000 // other functions hold 2,000
	got = Check(ctx, clients(t, f), settings)
	require.Equal(t, "FAIL", levels(got)["concurrency"], "%v", got)

	delete(settings, "mailFrom")
	f.calls = nil
	settings["region"] = "mx-central-1"
	got = Check(ctx, clients(t, f), settings)
	require.NotContains(t, f.calls, "ses:GetAccount", "no mail, no SES check")
	require.Equal(t, "warn", levels(got)["origin-shield"])
}
