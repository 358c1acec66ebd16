package stacks

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// AppStackProps connects the functions to the rest.
type AppStackProps struct {
	awscdk.StackProps
	Vpc   awsec2.IVpc
	Data  *DataStack
	Async *AsyncStack
	// Dist holds dist/<function>/bootstrap from make build.
	Dist string
	// PublicURL is what fans type (the CloudFront or custom domain).
	PublicURL string
	// MailFrom is the SES sender of ticket emails ("" logs them instead).
	MailFrom string
	// PSPURL is the payment provider's API base URL.
	PSPURL string
	// PSPRate is the PSP's API operations per second for this account.
	PSPRate int
	// PSPConcurrency is the reserved concurrency of the PSP consumer.
	PSPConcurrency int
	// APIConcurrency reserves concurrency for the API (0: unreserved, it
	// shares the account's pool); AdmitConcurrency for the admission
	// controller, so an API burst cannot throttle the waiting room's ticks.
	APIConcurrency, AdmitConcurrency int
}

// AppStack holds every function and the function URL CloudFront calls.
type AppStack struct {
	awscdk.Stack
	Functions map[string]awslambda.Function
	APIURL    awslambda.FunctionUrl
	// WebhookURL is pspwebhook's URL: the PSP calls it through CloudFront.
	WebhookURL awslambda.FunctionUrl
	Secrets    map[string]awssecretsmanager.Secret
	// EdgeKeys is the store the viewer-request function reads; the admit
	// function keeps it in sync (signing keys, gated events).
	EdgeKeys awscloudfront.KeyValueStore
}

// Functions are the folders of functions/, each built to dist/<name>/bootstrap.
var Functions = []string{"api", "admit", "sweep", "pspwebhook", "pspqueue", "fulfil", "reconcile", "migrate"}

// NewAppStack creates the functions (arm64, provided.al2023, in the VPC),
// their secrets and schedules. The API is a Lambda function URL with
// AWS_IAM auth that only CloudFront (through OAC) may invoke: it costs
// nothing per request beyond Lambda, has no 29 s or 10 MB API Gateway
// limits to work around, and CloudFront already gives caching, WAF and
// throttling. PSP calls have a small reserved concurrency so the PSP never
// sees more than its quota however long the queue grows.
func NewAppStack(scope constructs.Construct, id string, props *AppStackProps) *AppStack {
	st := awscdk.NewStack(scope, &id, &props.StackProps)
	a := &AppStack{Stack: st, Functions: map[string]awslambda.Function{}, Secrets: map[string]awssecretsmanager.Secret{}}
	for _, name := range []string{"session", "admission", "ticket"} {
		a.Secrets[name] = awssecretsmanager.NewSecret(st, jsii.String(title(name)+"Key"), &awssecretsmanager.SecretProps{
			Description: jsii.String("catraca " + name + " signing key (HMAC); rotate by prepending a new kid in the environment"),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength: jsii.Number(44), ExcludePunctuation: jsii.Bool(true)},
		})
	}
	a.Secrets["psp"] = awssecretsmanager.NewSecret(st, jsii.String("PSP"), &awssecretsmanager.SecretProps{
		Description: jsii.String("PSP credentials: set api_key and webhook_secret to the provider's values (docs/deploy.md)"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			SecretStringTemplate: jsii.String(`{"api_key":"replace-me"}`), GenerateStringKey: jsii.String("webhook_secret"),
			PasswordLength: jsii.Number(44), ExcludePunctuation: jsii.Bool(true)},
	})

	a.EdgeKeys = awscloudfront.NewKeyValueStore(st, jsii.String("EdgeKeys"), &awscloudfront.KeyValueStoreProps{
		Comment: jsii.String("catraca edge: signing keys (s:<kid>, a:<kid>) and gated events (room:<id>)")})
	env := a.environment(props)
	for _, name := range Functions {
		timeout, memory := 30.0, 512.0
		switch name {
		case "admit":
			timeout = 70 // ticks for ~57 s per invocation
		case "migrate":
			timeout, memory = 300, 256
		}
		fn := awslambda.NewFunction(st, jsii.String(title(name)), &awslambda.FunctionProps{
			Runtime:        awslambda.Runtime_PROVIDED_AL2023(),
			Architecture:   awslambda.Architecture_ARM_64(),
			Handler:        jsii.String("bootstrap"),
			Code:           awslambda.Code_FromAsset(jsii.String(filepath.Join(props.Dist, name)), nil),
			MemorySize:     jsii.Number(memory),
			Timeout:        awscdk.Duration_Seconds(jsii.Number(timeout)),
			Vpc:            props.Vpc,
			VpcSubnets:     &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
			SecurityGroups: &[]awsec2.ISecurityGroup{props.Data.ClientsSG},
			Environment:    only(env, name),
			LoggingFormat:  awslambda.LoggingFormat_JSON,
			LogGroup: awslogs.NewLogGroup(st, jsii.String(title(name)+"Logs"), &awslogs.LogGroupProps{
				Retention: awslogs.RetentionDays_ONE_YEAR, RemovalPolicy: awscdk.RemovalPolicy_DESTROY}),
			Tracing:         awslambda.Tracing_ACTIVE,
			DeadLetterQueue: deadLetters(name, props.Async.FailedInvocations),
		})
		for _, s := range a.Secrets {
			s.GrantRead(fn, nil)
		}
		for _, db := range append([]Database{props.Data.Catalog}, props.Data.Shards...) {
			db.Cluster.Secret().GrantRead(fn, nil)
		}
		a.Functions[name] = fn
		suppress(fn, "AWSLambdaBasicExecutionRole (logs) and AWSLambdaVPCAccessExecutionRole (ENIs) are AWS's minimal policies for a VPC function; "+
			"Resource::* is X-Ray tracing, which has no resource-level permissions (checked by the stack tests)",
			"AwsSolutions-IAM4", "AwsSolutions-IAM5")
		if fn.DeadLetterQueue() == nil {
			suppress(fn, "invoked synchronously (function URL, CloudFormation custom resource) or by an SQS event source with its own redrive queue: "+
				"the caller sees each failure, nothing is dropped", "Serverless-LambdaDLQ")
		}
	}
	for name, s := range a.Secrets {
		reason := "an HMAC signing key: it rotates by deploying with a new kid prepended (docs/deploy.md), which no rotation Lambda can do"
		if name == "psp" {
			reason = "the PSP's credentials: they rotate at the provider, then here by hand (docs/deploy.md)"
		}
		suppress(s, reason, "AwsSolutions-SMG4")
	}

	a.Functions["admit"].AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("cloudfront-keyvaluestore:DescribeKeyValueStore", "cloudfront-keyvaluestore:ListKeys", "cloudfront-keyvaluestore:UpdateKeys"),
		Resources: &[]*string{a.EdgeKeys.KeyValueStoreArn()},
	}))
	// Only the API enqueues PSP calls; only the consumer reads them.
	props.Async.PSPCalls.GrantSendMessages(a.Functions["api"])
	consumer := a.Functions["pspqueue"]
	consumer.AddEventSource(awslambdaeventsources.NewSqsEventSource(props.Async.PSPCalls, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize: jsii.Number(1), ReportBatchItemFailures: jsii.Bool(true),
		MaxConcurrency: jsii.Number(max(2, float64(props.PSPConcurrency)))}))
	suppress(consumer, "SQS event sources take no on-failure destination: PSPCalls' redrive policy moves a message failed five times to PSPCallsDLQ",
		"Serverless-LambdaEventSourceMappingDestination")
	for name, n := range map[string]int{"pspqueue": props.PSPConcurrency, "api": props.APIConcurrency, "admit": props.AdmitConcurrency} {
		if cfn, ok := a.Functions[name].Node().DefaultChild().(awslambda.CfnFunction); ok && n > 0 {
			cfn.SetReservedConcurrentExecutions(jsii.Number(float64(n)))
		}
	}
	if props.MailFrom != "" {
		a.Functions["fulfil"].AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ses:SendEmail"),
			Resources: jsii.Strings(fmt.Sprintf("arn:%s:ses:%s:%s:identity/*", *st.Partition(), *st.Region(), *st.Account())),
		}))
	}

	a.APIURL = a.Functions["api"].AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType: awslambda.FunctionUrlAuthType_AWS_IAM, InvokeMode: awslambda.InvokeMode_BUFFERED})
	// The PSP cannot sign requests for IAM: webhooks authenticate with
	// their HMAC signature (shared/psp), checked before anything is read.
	a.WebhookURL = a.Functions["pspwebhook"].AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType: awslambda.FunctionUrlAuthType_NONE, InvokeMode: awslambda.InvokeMode_BUFFERED})
	a.schedules(props)
	return a
}

// environment is the configuration every function reads (shared/config);
// secret values stay in Secrets Manager and are read at cold start.
func (a *AppStack) environment(props *AppStackProps) map[string]*string {
	dsn := func(db Database, host *string) string {
		s := *db.Cluster.Secret().SecretArn()
		// The user name is ours (data.go): only the password is a secret,
		// and every placeholder counts against Lambda's 4 KB environment.
		return fmt.Sprintf("postgres://%s:{{secret:%s#password}}@%s:5432/%s?sslmode=require", dbUser, s, *host, db.Name)
	}
	var shards, reads []string
	for i, db := range props.Data.Shards {
		shards = append(shards, fmt.Sprintf("%d=%s", i+1, dsn(db, db.Proxy.Endpoint())))
		reads = append(reads, fmt.Sprintf("%d=%s", i+1, dsn(db, db.Cluster.ClusterReadEndpoint().Hostname())))
	}
	key := func(name string) string { return "k1:{{secret:" + *a.Secrets[name].SecretArn() + "}}" }
	psp := *a.Secrets["psp"].SecretArn()
	env := map[string]string{
		"CATRACA_PUBLIC_URL":          props.PublicURL,
		"CATRACA_CATALOG_DSN":         dsn(props.Data.Catalog, props.Data.Catalog.Proxy.Endpoint()),
		"CATRACA_CATALOG_READ_DSN":    dsn(props.Data.Catalog, props.Data.Catalog.Cluster.ClusterReadEndpoint().Hostname()),
		"CATRACA_SHARD_DSNS":          strings.Join(shards, ","),
		"CATRACA_SHARD_READ_DSNS":     strings.Join(reads, ","),
		"CATRACA_DB_MAX_CONNS":        "4",
		"CATRACA_DB_PROXY":            "true",
		"CATRACA_REDIS_ADDR":          *props.Data.CacheHost + ":6379",
		"CATRACA_REDIS_TLS":           "true",
		"CATRACA_PSP_URL":             props.PSPURL,
		"CATRACA_PSP_API_KEY":         "{{secret:" + psp + "#api_key}}",
		"CATRACA_PSP_WEBHOOK_SECRETS": "k1:{{secret:" + psp + "#webhook_secret}}",
		"CATRACA_PSP_RATE":            fmt.Sprint(props.PSPRate),
		"CATRACA_PSP_QUEUE_URL":       *props.Async.PSPCalls.QueueUrl(),
		"CATRACA_MAIL_FROM":           props.MailFrom,
		"CATRACA_SESSION_KEYS":        key("session"),
		"CATRACA_ADMISSION_KEYS":      key("admission"),
		"CATRACA_TICKET_KEY":          key("ticket"),
		"CATRACA_EDGE_KVS_ARN":        *a.EdgeKeys.KeyValueStoreArn(),
	}
	out := map[string]*string{}
	for k, v := range env {
		out[k] = jsii.String(v)
	}
	return out
}

// usedBy names the variables only some functions read; every other
// variable is read by all (shared/config loads them at every start).
var usedBy = map[string][]string{
	"CATRACA_CATALOG_READ_DSN": {"api"}, // the read path's snapshots
	"CATRACA_SHARD_READ_DSNS":  {"api"},
	"CATRACA_EDGE_KVS_ARN":     {"admit"},  // publishes the edge's keys
	"CATRACA_MAIL_FROM":        {"fulfil"}, // sends the ticket emails
}

// only is env without the variables function name does not read.
func only(env map[string]*string, name string) *map[string]*string {
	out := map[string]*string{}
	for k, v := range env {
		if fns, ok := usedBy[k]; !ok || slices.Contains(fns, name) {
			out[k] = v
		}
	}
	return &out
}

// schedules invokes admit, sweep, fulfil and reconcile with EventBridge
// Scheduler; failed invocations land in the dead-letter queue.
func (a *AppStack) schedules(props *AppStackProps) {
	role := awsiam.NewRole(a.Stack, jsii.String("SchedulerRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), nil)})
	props.Async.FailedInvocations.GrantSendMessages(role)
	for name, rate := range map[string]string{"admit": "rate(1 minute)", "sweep": "rate(1 minute)", "fulfil": "rate(1 minute)", "reconcile": "rate(5 minutes)"} {
		fn := a.Functions[name]
		fn.GrantInvoke(role)
		suppress(role, "GrantInvoke's <function>:* covers the function's versions and aliases, of these four functions only", "AwsSolutions-IAM5")
		awsscheduler.NewCfnSchedule(a.Stack, jsii.String(title(name)+"Schedule"), &awsscheduler.CfnScheduleProps{
			ScheduleExpression: jsii.String(rate),
			FlexibleTimeWindow: &awsscheduler.CfnSchedule_FlexibleTimeWindowProperty{Mode: jsii.String("OFF")},
			Target: &awsscheduler.CfnSchedule_TargetProperty{
				Arn: fn.FunctionArn(), RoleArn: role.RoleArn(),
				RetryPolicy:      &awsscheduler.CfnSchedule_RetryPolicyProperty{MaximumRetryAttempts: jsii.Number(2), MaximumEventAgeInSeconds: jsii.Number(120)},
				DeadLetterConfig: &awsscheduler.CfnSchedule_DeadLetterConfigProperty{Arn: props.Async.FailedInvocations.QueueArn()},
			},
		})
	}
}

// deadLetters is where the scheduled functions' failed runs go once
// Lambda's asynchronous retries are spent (the others are invoked
// synchronously: their callers see failures).
func deadLetters(name string, q awssqs.IQueue) awssqs.IQueue {
	switch name {
	case "admit", "sweep", "fulfil", "reconcile":
		return q
	}
	return nil
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
