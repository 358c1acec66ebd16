package stacks

import (
	"fmt"
	"maps"
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
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/catraca/catraca/shared/config"
)

// AppStackProps connects the functions to the rest.
type AppStackProps struct {
	awscdk.StackProps
	Vpc   awsec2.IVpc
	Data  *DataStack
	Async *AsyncStack
	// Dist holds dist/<function>/bootstrap from make build.
	Dist string
	// PublicURL is what fans type (the CloudFront or custom domain). When
	// it is empty the functions read it at cold start from the parameter
	// PublicURLParameter, which the edge stack writes once the distribution
	// exists: a first deployment without a domain is one step.
	PublicURL, PublicURLParameter string
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
	// SearchSnapshots holds the search index's snapshot (search.go).
	SearchSnapshots awss3.Bucket
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
	a := &AppStack{Stack: st, Functions: map[string]awslambda.Function{}}
	a.secrets()
	a.EdgeKeys = awscloudfront.NewKeyValueStore(st, jsii.String("EdgeKeys"), &awscloudfront.KeyValueStoreProps{
		Comment: jsii.String("catraca edge: signing keys (s:<kid>, a:<kid>) and gated events (room:<id>)")})
	a.searchSnapshots()
	values := a.settings(props)
	for _, name := range Functions {
		env := environment(name, a.override(props, name, values))
		a.Functions[name] = a.function(props, name, env)
		a.grant(props, a.Functions[name], env)
		a.grantSearchSnapshots(name, a.Functions[name], env)
	}
	a.concurrency(props)
	a.APIURL = a.Functions["api"].AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType: awslambda.FunctionUrlAuthType_AWS_IAM, InvokeMode: awslambda.InvokeMode_BUFFERED})
	// The PSP cannot sign requests for IAM: webhooks authenticate with
	// their HMAC signature (shared/psp), checked before anything is read.
	a.WebhookURL = a.Functions["pspwebhook"].AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType: awslambda.FunctionUrlAuthType_NONE, InvokeMode: awslambda.InvokeMode_BUFFERED})
	return a
}

// secrets creates the signing keys and the PSP's credentials.
func (a *AppStack) secrets() {
	a.Secrets = map[string]awssecretsmanager.Secret{}
	for _, name := range []string{"session", "admission", "ticket"} {
		a.Secrets[name] = awssecretsmanager.NewSecret(a.Stack, jsii.String(title(name)+"Key"), &awssecretsmanager.SecretProps{
			Description: jsii.String("catraca " + name + " signing key (HMAC); rotate by prepending a new kid in the environment"),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength: jsii.Number(44), ExcludePunctuation: jsii.Bool(true)},
		})
		suppress(a.Secrets[name], "an HMAC signing key: it rotates by deploying with a new kid prepended (docs/deploy.md), which no rotation Lambda can do",
			"AwsSolutions-SMG4")
	}
	// Three secrets, not one JSON: the API and the workers read the
	// secret key, pspwebhook only the webhook signing secret and a
	// restricted key that can read payments (to confirm each event), and a
	// grant covers a whole secret.
	for _, s := range []struct{ name, id, what string }{
		{"psp", "PSPKey", "Stripe secret key (sk_live_…)"},
		{"pspread", "PSPReadKey", "Stripe restricted key that reads Checkout Sessions, PaymentIntents and charges (rk_live_…), for pspwebhook"},
		{"webhook", "PSPWebhookSecret", "Stripe webhook signing secret (whsec_…) of the /api/psp/webhook endpoint"},
	} {
		a.Secrets[s.name] = awssecretsmanager.NewSecret(a.Stack, jsii.String(s.id), &awssecretsmanager.SecretProps{
			Description: jsii.String(s.what + ": replace the generated value with Stripe's (docs/deploy.md)"),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				PasswordLength: jsii.Number(44), ExcludePunctuation: jsii.Bool(true)},
		})
	}
	for _, name := range []string{"psp", "pspread", "webhook"} {
		suppress(a.Secrets[name], "the PSP's credentials: they rotate at the provider, then here by hand (docs/deploy.md)", "AwsSolutions-SMG4")
	}
}

// function creates the Lambda function name with environment env.
func (a *AppStack) function(props *AppStackProps, name string, env map[string]*string) awslambda.Function {
	timeout, memory := 30.0, 512.0
	switch name {
	case "admit":
		timeout = 70 // ticks for ~57 s per invocation
	case "migrate":
		timeout, memory = 300, 256
	}
	fn := awslambda.NewFunction(a.Stack, jsii.String(title(name)), &awslambda.FunctionProps{
		Runtime:        awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:   awslambda.Architecture_ARM_64(),
		Handler:        jsii.String("bootstrap"),
		Code:           awslambda.Code_FromAsset(jsii.String(filepath.Join(props.Dist, name)), nil),
		MemorySize:     jsii.Number(memory),
		Timeout:        awscdk.Duration_Seconds(jsii.Number(timeout)),
		Vpc:            props.Vpc,
		VpcSubnets:     &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
		SecurityGroups: &[]awsec2.ISecurityGroup{props.Data.ClientsSG},
		Environment:    &env,
		LoggingFormat:  awslambda.LoggingFormat_JSON,
		LogGroup: awslogs.NewLogGroup(a.Stack, jsii.String(title(name)+"Logs"), &awslogs.LogGroupProps{
			Retention: awslogs.RetentionDays_ONE_YEAR, RemovalPolicy: awscdk.RemovalPolicy_DESTROY}),
		Tracing:         awslambda.Tracing_ACTIVE,
		DeadLetterQueue: deadLetters(name, props.Async.FailedInvocations),
	})
	suppress(fn, "AWSLambdaBasicExecutionRole (logs) and AWSLambdaVPCAccessExecutionRole (ENIs) are AWS's minimal policies for a VPC function; "+
		"Resource::* is X-Ray tracing, which has no resource-level permissions (checked by the stack tests)",
		"AwsSolutions-IAM4", "AwsSolutions-IAM5")
	if fn.DeadLetterQueue() == nil {
		suppress(fn, "invoked synchronously (function URL, CloudFormation custom resource) or by an SQS event source with its own redrive queue: "+
			"the caller sees each failure, nothing is dropped", "Serverless-LambdaDLQ")
	}
	return fn
}

// settings are the values of every variable the stack sets (shared/config
// reads them); secret values stay in Secrets Manager and are read at cold
// start. A function gets those its configuration reads (environment).
func (a *AppStack) settings(props *AppStackProps) map[string]string {
	topology := props.Data.topologyField
	key := func(name string) string { return "k1:{{secret:" + *a.Secrets[name].SecretArn() + "}}" }
	v := map[string]string{
		"CATRACA_CATALOG_DSN":         topology(TopologyCatalog),
		"CATRACA_CATALOG_READ_DSN":    topology(TopologyCatalogRead),
		"CATRACA_SHARD_DSNS":          topology(TopologyShards),
		"CATRACA_SHARD_READ_DSNS":     topology(TopologyShardReads),
		"CATRACA_DB_MAX_CONNS":        "4",
		"CATRACA_DB_PROXY":            "true",
		"CATRACA_REDIS_ADDR":          *props.Data.CacheHost + ":6379",
		"CATRACA_REDIS_TLS":           "true",
		"CATRACA_REDIS_CLUSTER":       "true", // ElastiCache Serverless speaks only cluster mode
		"CATRACA_PSP_URL":             props.PSPURL,
		"CATRACA_PSP_API_KEY":         "{{secret:" + *a.Secrets["psp"].SecretArn() + "}}",
		"CATRACA_PSP_WEBHOOK_SECRETS": "{{secret:" + *a.Secrets["webhook"].SecretArn() + "}}",
		"CATRACA_PSP_RATE":            fmt.Sprint(props.PSPRate),
		"CATRACA_PSP_QUEUE_URL":       *props.Async.PSPCalls.QueueUrl(),
		"CATRACA_SESSION_KEYS":        key("session"),
		"CATRACA_ADMISSION_KEYS":      key("admission"),
		"CATRACA_TICKET_KEY":          key("ticket"),
		"CATRACA_EDGE_KVS_ARN":        *a.EdgeKeys.KeyValueStoreArn(),
		"CATRACA_SEARCH_SNAPSHOT":     a.searchSnapshotURL(),
	}
	if props.PublicURL != "" {
		v["CATRACA_PUBLIC_URL"] = props.PublicURL
	} else if props.PublicURLParameter != "" {
		v["CATRACA_PUBLIC_URL"] = "{{ssm:" + props.PublicURLParameter + "}}"
	}
	if props.MailFrom != "" {
		v["CATRACA_MAIL_FROM"] = props.MailFrom
	}
	return v
}

// override is values as function name sees them: its own database
// login (databaseValues), and pspwebhook reads the PSP with the
// restricted key (it confirms events, never moves money).
func (a *AppStack) override(props *AppStackProps, name string, values map[string]string) map[string]string {
	v := maps.Clone(values)
	databaseValues(name, v, props.Data.topologyField)
	if name == "pspwebhook" {
		v["CATRACA_PSP_API_KEY"] = "{{secret:" + *a.Secrets["pspread"].SecretArn() + "}}"
	}
	return v
}

// environment is what function name reads of values: the variables of its
// configuration (config.Functions), no other.
func environment(name string, values map[string]string) map[string]*string {
	env := map[string]*string{}
	for _, v := range config.Vars(config.Functions[name]) {
		if value, ok := values[v.Name]; ok {
			env[v.Name] = jsii.String(value)
		} else if v.Required {
			panic(fmt.Sprintf("stacks: function %s requires %s, which the app stack does not set", name, v.Name))
		}
	}
	return env
}

// grant lets fn use what its environment names: each secret it refers to
// (through the topology, migrate's the clusters' master secrets), the
// database role it logs in as, the queue it sends to, the sender it mails from, the store it
// keeps.
func (a *AppStack) grant(props *AppStackProps, fn awslambda.Function, env map[string]*string) {
	refers := func(ref string) bool {
		for _, v := range env {
			if strings.Contains(*v, ref) {
				return true
			}
		}
		return false
	}
	granted := map[string]bool{}
	read := func(s awssecretsmanager.ISecret) {
		if !granted[*s.SecretArn()] {
			granted[*s.SecretArn()] = true
			s.GrantRead(fn, nil)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(a.Secrets)) {
		if refers("{{secret:" + *a.Secrets[name].SecretArn()) {
			read(a.Secrets[name])
		}
	}
	if refers("{{secret:" + *props.Data.Topology.SecretArn() + "#") {
		read(props.Data.Topology)
	}
	for _, field := range slices.Sorted(maps.Keys(props.Data.TopologyUses)) {
		if refers(props.Data.topologyField(field)) {
			for _, s := range props.Data.TopologyUses[field] {
				read(s)
			}
		}
	}
	grantDatabases(props, fn, env)
	if env["CATRACA_PSP_QUEUE_URL"] != nil {
		props.Async.PSPCalls.GrantSendMessages(fn)
	}
	if props.PublicURLParameter != "" && refers("{{ssm:"+props.PublicURLParameter+"}}") {
		st := a.Stack
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ssm:GetParameter"),
			Resources: jsii.Strings(fmt.Sprintf("arn:%s:ssm:%s:%s:parameter%s", *st.Partition(), *st.Region(), *st.Account(), props.PublicURLParameter)),
		}))
	}
	if env["CATRACA_MAIL_FROM"] != nil {
		st := a.Stack
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("ses:SendEmail"),
			Resources: jsii.Strings(fmt.Sprintf("arn:%s:ses:%s:%s:identity/*", *st.Partition(), *st.Region(), *st.Account())),
		}))
	}
	if env["CATRACA_EDGE_KVS_ARN"] != nil {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("cloudfront-keyvaluestore:DescribeKeyValueStore", "cloudfront-keyvaluestore:ListKeys", "cloudfront-keyvaluestore:UpdateKeys"),
			Resources: &[]*string{a.EdgeKeys.KeyValueStoreArn()},
		}))
	}
}

// concurrency connects the PSP consumer to its queue and reserves
// concurrency: pspqueue's keeps the PSP under its quota, api's and
// admit's keep a burst of one from throttling the other.
func (a *AppStack) concurrency(props *AppStackProps) {
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
}

// deadLetters is where the scheduled functions' failed runs go once
// Lambda's asynchronous retries are spent (the others are invoked
// synchronously: their callers see failures).
func deadLetters(name string, q awssqs.IQueue) awssqs.IQueue {
	if _, ok := Scheduled[name]; ok {
		return q
	}
	return nil
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
