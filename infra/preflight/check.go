package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/rds"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/catraca/catraca/infra/stacks"
)

// Clients are the AWS APIs preflight reads.
type Clients struct {
	Lambda *lambda.Client
	SES    *sesv2.Client
	RDS    *rds.Client
}

// Finding is one check's verdict.
type Finding struct {
	Level string // "ok", "warn" or "FAIL"
	Check string
	Text  string
}

func (f Finding) String() string { return fmt.Sprintf("%-4s %-13s %s", f.Level, f.Check, f.Text) }

// Failed tells whether any finding stops the deployment.
func Failed(fs []Finding) bool {
	for _, f := range fs {
		if f.Level == "FAIL" {
			return true
		}
	}
	return false
}

// lambdaMinUnreserved is what Lambda keeps unreserved in every account:
// a reservation that would leave less is refused, and the stack fails.
const lambdaMinUnreserved = 100

// Check runs every check for the deployment settings s (the CDK context).
func Check(ctx context.Context, c Clients, s map[string]string) []Finding {
	var out []Finding
	out = append(out, concurrency(ctx, c, s))
	if s["mailFrom"] != "" {
		out = append(out, sandbox(ctx, c))
	}
	out = append(out, engine(ctx, c))
	out = append(out, shield(s["region"]))
	return out
}

// reserved is the Lambda concurrency the stacks reserve for settings s
// (the app stack's concurrency: api, admit and the PSP consumer).
func reserved(s map[string]string) (int, string) {
	n := func(k string, def int) int {
		if v, err := strconv.Atoi(s[k]); err == nil {
			return v
		}
		return def
	}
	api, admit, psp := n("apiConcurrency", 0), n("admitConcurrency", 2), n("pspConcurrency", 5)
	return api + admit + psp, fmt.Sprintf("apiConcurrency %d + admitConcurrency %d + pspConcurrency %d", api, admit, psp)
}

func concurrency(ctx context.Context, c Clients, s map[string]string) Finding {
	const check = "concurrency"
	out, err := c.Lambda.GetAccountSettings(ctx, &lambda.GetAccountSettingsInput{})
	if err != nil {
		return Finding{"FAIL", check, "cannot read the Lambda account settings: " + err.Error()}
	}
	limit := int(out.AccountLimit.ConcurrentExecutions)
	unreserved := int(aws.ToInt32(out.AccountLimit.UnreservedConcurrentExecutions))
	want, what := reserved(s)
	switch {
	case want > limit-lambdaMinUnreserved:
		return Finding{"FAIL", check, fmt.Sprintf("the stacks reserve %d (%s) but the account's quota is %d and Lambda keeps %d unreserved: "+
			"ask for a higher quota (Service Quotas, Lambda \"Concurrent executions\") or lower apiConcurrency to at most %d",
			want, what, limit, lambdaMinUnreserved, limit-lambdaMinUnreserved-(want-reservedAPI(s)))}
	case want > unreserved-lambdaMinUnreserved:
		return Finding{"FAIL", check, fmt.Sprintf("the stacks reserve %d (%s) but other functions already reserve %d of the account's %d: "+
			"only %d can still be reserved (a redeployment counts its own reservations here too: compare with the current values)",
			want, what, limit-unreserved, limit, unreserved-lambdaMinUnreserved)}
	}
	return Finding{"ok", check, fmt.Sprintf("reserving %d (%s) of %d, %d unreserved before", want, what, limit, unreserved)}
}

func reservedAPI(s map[string]string) int {
	v, _ := strconv.Atoi(s["apiConcurrency"])
	return v
}

func sandbox(ctx context.Context, c Clients) Finding {
	const check = "ses"
	out, err := c.SES.GetAccount(ctx, &sesv2.GetAccountInput{})
	switch {
	case err != nil:
		return Finding{"FAIL", check, "mailFrom is set but the SES account cannot be read: " + err.Error()}
	case !out.SendingEnabled:
		return Finding{"FAIL", check, "mailFrom is set but sending is paused for this SES account: no ticket email would go out"}
	case !out.ProductionAccessEnabled:
		return Finding{"FAIL", check, "mailFrom is set but SES is in the sandbox in this region: tickets would reach only verified addresses. " +
			"Request production access (SES console, Account dashboard) or deploy without mailFrom"}
	}
	return Finding{"ok", check, "SES has production access and sending enabled"}
}

func engine(ctx context.Context, c Clients) Finding {
	const check = "aurora"
	out, err := c.RDS.DescribeDBEngineVersions(ctx, &rds.DescribeDBEngineVersionsInput{
		Engine: aws.String("aurora-postgresql"), EngineVersion: aws.String(stacks.AuroraPostgresVersion)})
	if err != nil {
		return Finding{"FAIL", check, "cannot list Aurora PostgreSQL versions: " + err.Error()}
	}
	if len(out.DBEngineVersions) == 0 {
		return Finding{"FAIL", check, "Aurora PostgreSQL " + stacks.AuroraPostgresVersion + " is not offered in this region: the data stack would fail"}
	}
	return Finding{"ok", check, "Aurora PostgreSQL " + stacks.AuroraPostgresVersion + " is offered"}
}

func shield(region string) Finding {
	const check = "origin-shield"
	s, ok := stacks.OriginShieldRegion(region)
	switch {
	case !ok:
		return Finding{"warn", check, region + " is not in the Origin Shield table (infra/stacks/shield.go): the API is deployed without Origin Shield; add the region the CloudFront guide names for it"}
	case s != region:
		return Finding{"ok", check, region + " has no Origin Shield: the stacks put it in " + s + ", the nearest the CloudFront guide names"}
	}
	return Finding{"ok", check, "Origin Shield in " + region}
}
