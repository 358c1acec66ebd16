package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/catraca/catraca/shared/config"
)

// GlobalStackProps tunes the web ACL.
type GlobalStackProps struct {
	awscdk.StackProps
	// RateLimit is the WAF's requests per IP per 5 minutes.
	RateLimit float64
	// Domain, when set without a certificate, gets an ACM certificate
	// validated by DNS: the deployment waits until its CNAME exists.
	Domain string
}

// GlobalStack holds what CloudFront only accepts from us-east-1: the web
// ACL and the certificate. Nothing in it refers to a regional resource.
type GlobalStack struct {
	awscdk.Stack
	WebACL      awswafv2.CfnWebACL
	Certificate awscertificatemanager.Certificate // nil without a domain
}

// NewGlobalStack creates the web ACL of the distribution.
func NewGlobalStack(scope constructs.Construct, id string, props *GlobalStackProps) *GlobalStack {
	st := awscdk.NewStack(scope, &id, &props.StackProps)
	g := &GlobalStack{Stack: st, WebACL: webACL(st, props.RateLimit)}
	if props.Domain != "" {
		g.Certificate = awscertificatemanager.NewCertificate(st, jsii.String("Certificate"), &awscertificatemanager.CertificateProps{
			DomainName: jsii.String(props.Domain), Validation: awscertificatemanager.CertificateValidation_FromDns(nil)})
	}
	return g
}

// webhookPath is where the PSP posts its signed webhooks: its HMAC
// signature is the authentication, and the PSP is a bot by design, sending
// from a few addresses in bursts, so bot and per-IP rules skip it.
const webhookPath = "/api/psp/webhook"

// webACL limits each IP (a waiting fan polls about 150 times in 5
// minutes), drops known-bad inputs and IPs, challenges bots, and refuses
// bodies larger than the app accepts (config.DefaultMaxBodyBytes, more
// only on layout imports).
func webACL(st awscdk.Stack, rateLimit float64) awswafv2.CfnWebACL {
	if rateLimit == 0 {
		rateLimit = 1500
	}
	visibility := func(name string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{CloudWatchMetricsEnabled: jsii.Bool(true), MetricName: jsii.String(name), SampledRequestsEnabled: jsii.Bool(true)}
	}
	uri := &awswafv2.CfnWebACL_FieldToMatchProperty{UriPath: map[string]any{}}
	none := &[]any{&awswafv2.CfnWebACL_TextTransformationProperty{Priority: jsii.Number(0), Type: jsii.String("NONE")}}
	not := func(s *awswafv2.CfnWebACL_StatementProperty) *awswafv2.CfnWebACL_StatementProperty {
		return &awswafv2.CfnWebACL_StatementProperty{NotStatement: &awswafv2.CfnWebACL_NotStatementProperty{Statement: s}}
	}
	notWebhook := not(&awswafv2.CfnWebACL_StatementProperty{ByteMatchStatement: &awswafv2.CfnWebACL_ByteMatchStatementProperty{
		FieldToMatch: uri, PositionalConstraint: jsii.String("EXACTLY"), SearchString: jsii.String(webhookPath), TextTransformations: none}})
	managed := func(priority float64, name string, scope *awswafv2.CfnWebACL_StatementProperty, configs *[]any, overrides *[]any) *awswafv2.CfnWebACL_RuleProperty {
		return &awswafv2.CfnWebACL_RuleProperty{
			Name: jsii.String(name), Priority: jsii.Number(priority),
			OverrideAction: &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]any{}},
			Statement: &awswafv2.CfnWebACL_StatementProperty{ManagedRuleGroupStatement: &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{
				VendorName: jsii.String("AWS"), Name: jsii.String(name), ScopeDownStatement: scope,
				ManagedRuleGroupConfigs: configs, RuleActionOverrides: overrides}},
			VisibilityConfig: visibility(name),
		}
	}
	// The core rule set refuses bodies over 8 KB; that rule only counts
	// here and BodyTooLarge applies the app's own limits instead.
	countLargeBodies := &[]any{&awswafv2.CfnWebACL_RuleActionOverrideProperty{Name: jsii.String("SizeRestrictions_BODY"),
		ActionToUse: &awswafv2.CfnWebACL_RuleActionProperty{Count: map[string]any{}}}}
	largeBody := &awswafv2.CfnWebACL_StatementProperty{SizeConstraintStatement: &awswafv2.CfnWebACL_SizeConstraintStatementProperty{
		// Bodies beyond the inspection limit (raised to 64 KB below) match.
		FieldToMatch:       &awswafv2.CfnWebACL_FieldToMatchProperty{Body: &awswafv2.CfnWebACL_BodyProperty{OversizeHandling: jsii.String("MATCH")}},
		ComparisonOperator: jsii.String("GT"), Size: jsii.Number(config.DefaultMaxBodyBytes), TextTransformations: none}}
	layoutImport := &awswafv2.CfnWebACL_StatementProperty{RegexMatchStatement: &awswafv2.CfnWebACL_RegexMatchStatementProperty{
		FieldToMatch: uri, RegexString: jsii.String(config.LayoutImportPath.String()), TextTransformations: none}}
	return awswafv2.NewCfnWebACL(st, jsii.String("WebACL"), &awswafv2.CfnWebACLProps{
		Scope:            jsii.String("CLOUDFRONT"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: map[string]any{}},
		VisibilityConfig: visibility("catraca"),
		CustomResponseBodies: map[string]any{"body-too-large": &awswafv2.CfnWebACL_CustomResponseBodyProperty{ContentType: jsii.String("APPLICATION_JSON"),
			Content: jsii.String(fmt.Sprintf(`{"type":"https://catraca.dev/problems/body-too-large","title":"Request Entity Too Large","status":413,"detail":"The body is larger than %d bytes."}`, config.DefaultMaxBodyBytes))}},
		AssociationConfig: &awswafv2.CfnWebACL_AssociationConfigProperty{RequestBody: map[string]any{
			"CLOUDFRONT": &awswafv2.CfnWebACL_RequestBodyAssociatedResourceTypeConfigProperty{DefaultSizeInspectionLimit: jsii.String("KB_64")}}},
		Rules: &[]any{
			&awswafv2.CfnWebACL_RuleProperty{
				Name: jsii.String("RatePerIP"), Priority: jsii.Number(0),
				Action: &awswafv2.CfnWebACL_RuleActionProperty{Block: map[string]any{}},
				Statement: &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{
					Limit: jsii.Number(rateLimit), AggregateKeyType: jsii.String("IP"), EvaluationWindowSec: jsii.Number(300),
					ScopeDownStatement: notWebhook}},
				VisibilityConfig: visibility("RatePerIP"),
			},
			managed(1, "AWSManagedRulesAmazonIpReputationList", nil, nil, nil),
			// The groups that inspect bodies skip Stripe's deliveries: an
			// event's JSON (URLs, customer text in metadata) can look like
			// an attack to them, and a blocked delivery is a lost payment
			// until reconciliation. Its signature authenticates it.
			managed(2, "AWSManagedRulesCommonRuleSet", notWebhook, nil, countLargeBodies),
			&awswafv2.CfnWebACL_RuleProperty{
				Name: jsii.String("BodyTooLarge"), Priority: jsii.Number(3),
				Action: &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{
					CustomResponse: &awswafv2.CfnWebACL_CustomResponseProperty{ResponseCode: jsii.Number(413), CustomResponseBodyKey: jsii.String("body-too-large")}}},
				Statement: &awswafv2.CfnWebACL_StatementProperty{AndStatement: &awswafv2.CfnWebACL_AndStatementProperty{
					Statements: &[]any{largeBody, not(layoutImport)}}},
				VisibilityConfig: visibility("BodyTooLarge"),
			},
			managed(4, "AWSManagedRulesKnownBadInputsRuleSet", notWebhook, nil, nil),
			managed(5, "AWSManagedRulesBotControlRuleSet", notWebhook, &[]any{&awswafv2.CfnWebACL_ManagedRuleGroupConfigProperty{
				AwsManagedRulesBotControlRuleSet: &awswafv2.CfnWebACL_AWSManagedRulesBotControlRuleSetProperty{InspectionLevel: jsii.String("COMMON")}}}, nil),
			// A request Bot Control labelled a bot and let through carries
			// the label to the origin (WAF prefixes the header:
			// x-amzn-waf-catraca-bot), a signal of the waiting room's risk
			// score (risk.BotHeader, docs/fairness.md).
			&awswafv2.CfnWebACL_RuleProperty{
				Name: jsii.String("BotLabelToOrigin"), Priority: jsii.Number(6),
				Action: &awswafv2.CfnWebACL_RuleActionProperty{Count: &awswafv2.CfnWebACL_CountActionProperty{
					CustomRequestHandling: &awswafv2.CfnWebACL_CustomRequestHandlingProperty{InsertHeaders: &[]any{
						&awswafv2.CfnWebACL_CustomHTTPHeaderProperty{Name: jsii.String("catraca-bot"), Value: jsii.String("1")}}}}},
				Statement: &awswafv2.CfnWebACL_StatementProperty{LabelMatchStatement: &awswafv2.CfnWebACL_LabelMatchStatementProperty{
					Scope: jsii.String("NAMESPACE"), Key: jsii.String("awswaf:managed:aws:bot-control:bot:")}},
				VisibilityConfig: visibility("BotLabelToOrigin"),
			},
		},
	})
}
