// Command preflight says, before a deployment, what in the AWS account
// would make it fail or leave it broken: Lambda concurrency the
// configuration reserves beyond the account's quota, SES still in the
// sandbox when the shop mails tickets, an Aurora PostgreSQL version the
// region does not offer, no Origin Shield for the region. It only reads
// (GetAccountSettings, GetAccount, DescribeDBEngineVersions) and takes
// the deployment's settings as the CDK app does: cdk.json's context,
// overridden by -c key=value.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
)

type contextFlags map[string]string

func (c contextFlags) String() string { return fmt.Sprint(map[string]string(c)) }
func (c contextFlags) Set(kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("want key=value, got %q", kv)
	}
	c[k] = v
	return nil
}

func main() {
	settings := contextFlags{}
	cdkJSON := flag.String("cdk-json", "cdk.json", "the CDK app's settings")
	flag.Var(settings, "c", "a CDK context value, key=value (repeatable), as for cdk deploy")
	flag.Parse()
	ctx := context.Background()
	s, err := readSettings(*cdkJSON, settings)
	if err != nil {
		fmt.Fprintln(os.Stderr, "preflight:", err)
		os.Exit(2)
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, func(o *awsconfig.LoadOptions) error {
		if r := s["region"]; r != "" {
			o.Region = r
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "preflight: aws config:", err)
		os.Exit(2)
	}
	if s["region"] == "" {
		s["region"] = cfg.Region
	}
	aws := Clients{Lambda: lambda.NewFromConfig(cfg), SES: sesv2.NewFromConfig(cfg), RDS: rds.NewFromConfig(cfg)}
	findings := Check(ctx, aws, s)
	for _, f := range findings {
		fmt.Println(f)
	}
	if Failed(findings) {
		fmt.Println("preflight: the deployment would fail or go blind: fix the FAIL lines first (docs/deploy.md)")
		os.Exit(1)
	}
	fmt.Println("preflight: nothing found that would stop the deployment")
}

// readSettings is cdk.json's context with overrides on top.
func readSettings(path string, overrides map[string]string) (map[string]string, error) {
	out := map[string]string{}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for k, v := range doc.Context {
		out[k] = fmt.Sprint(v)
	}
	for k, v := range overrides {
		out[k] = v
	}
	return out, nil
}
