package stacks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/catraca/catraca/shared/metrics"
)

// OpsStackProps names what operations watches.
type OpsStackProps struct {
	awscdk.StackProps
	App    *AppStack
	Async  *AsyncStack
	Data   *DataStack // its proxies' pinned sessions are alarmed
	Shards int
	// AlarmEmail is subscribed to the alarms' topic ("" leaves the topic
	// without subscribers: subscribe a pager later).
	AlarmEmail string
	// Migrations is shared/migrate; its hash makes every change re-run the
	// migration resources.
	Migrations string
}

// NewOpsStack runs migrations on deployment (a custom resource per
// database, served by the migrate function itself: no extra runtime) and
// builds the on-sale dashboard and its alarms.
func NewOpsStack(scope constructs.Construct, id string, props *OpsStackProps) awscdk.Stack {
	st := awscdk.NewStack(scope, &id, &props.StackProps)
	version := hashDir(props.Migrations)
	migrate := props.App.Functions["migrate"].FunctionArn()
	catalog := awscdk.NewCustomResource(st, jsii.String("MigrateCatalog"), &awscdk.CustomResourceProps{
		ServiceToken: migrate, ResourceType: jsii.String("Custom::CatracaMigration"),
		Properties: &map[string]any{"Kind": "catalog", "Version": version}})
	migrations := []constructs.IConstruct{catalog}
	for i := 1; i <= props.Shards; i++ {
		r := awscdk.NewCustomResource(st, jsii.String(fmt.Sprintf("MigrateShard%d", i)), &awscdk.CustomResourceProps{
			ServiceToken: migrate, ResourceType: jsii.String("Custom::CatracaMigration"),
			Properties: &map[string]any{"Kind": "shard", "ShardId": fmt.Sprint(i), "Version": version}})
		r.Node().AddDependency(catalog)
		migrations = append(migrations, r)
	}
	schedule(st, props.App, props.Async, migrations)

	metric := func(name, stat string) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(name),
			Statistic: jsii.String(stat), Period: awscdk.Duration_Minutes(jsii.Number(1))})
	}
	depth := func(q awssqs.Queue) awscloudwatch.Metric {
		return q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum")})
	}
	// arrivals counts the messages a dead-letter queue gained in a minute.
	// Its depth would stay above the threshold for the 14 days messages
	// are kept: the alarm would never go back to OK and a second failure
	// would notify nobody. NumberOfMessagesSent misses what SQS moves by
	// a redrive policy, so the alarm watches the depth's rise instead.
	arrivals := func(q awssqs.Queue) awscloudwatch.IMetric {
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{Expression: jsii.String("DIFF(depth)"),
			UsingMetrics: &map[string]awscloudwatch.IMetric{"depth": depth(q)}, Period: awscdk.Duration_Minutes(jsii.Number(1))})
	}
	var throttles []awscloudwatch.IMetric
	for _, name := range Functions {
		throttles = append(throttles, props.App.Functions[name].MetricThrottles(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1))}))
	}
	graph := func(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.GraphWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &metrics, Width: jsii.Number(8)})
	}
	dash := awscloudwatch.NewDashboard(st, jsii.String("OnSale"), &awscloudwatch.DashboardProps{DashboardName: jsii.String(id + "-on-sale")})
	dash.AddWidgets(
		graph("Waiting room: queue depth", metric(metrics.QueueWaiting, "Maximum")),
		graph("Admitted per minute", metric(metrics.Admitted, "Sum")),
		graph("Holds per minute", metric(metrics.Holds, "Sum"), metric(metrics.HoldConflicts, "Sum")),
	)
	dash.AddWidgets(
		graph("PSP errors", metric(metrics.PSPErrors, "Sum")),
		graph("HTTP 5xx", metric(metrics.HTTP5xx, "Sum")),
		graph("PSP call queue", depth(props.Async.PSPCalls), depth(props.Async.PSPCallsDLQ)),
	)
	dash.AddWidgets(graph("Outbox messages set aside", metric(metrics.OutboxDead, "Sum")), graph("Refunds failed", metric(metrics.RefundsFailed, "Sum")))
	dash.AddWidgets(graph("Lambda throttles", throttles...))

	topic := awssns.NewTopic(st, jsii.String("Alarms"), &awssns.TopicProps{EnforceSSL: jsii.Bool(true), DisplayName: jsii.String("catraca alarms")})
	suppress(topic, "alarm notifications carry alarm names only, and CloudWatch cannot publish to a topic under the AWS-managed SNS key", "AwsSolutions-SNS2")
	if props.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(props.AlarmEmail), nil))
		suppress(topic, "an undeliverable email notification has nowhere useful to go; the alarm stays visible in CloudWatch", "Serverless-SNSRedrivePolicy")
	}
	awscdk.NewCfnOutput(st, jsii.String("AlarmTopic"), &awscdk.CfnOutputProps{Value: topic.TopicArn()})
	alarm := func(name string, m awscloudwatch.IMetric, threshold float64, periods float64, what string) {
		a := awscloudwatch.NewAlarm(st, jsii.String(name), &awscloudwatch.AlarmProps{Metric: m,
			AlarmDescription: jsii.String(what), Threshold: jsii.Number(threshold), EvaluationPeriods: jsii.Number(periods),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING})
		a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
	}
	alarm("FiveXX", metric(metrics.HTTP5xx, "Sum"), 50, 3, "The API answers 5xx: check the dashboard and the function logs")
	alarm("PSPErrors", metric(metrics.PSPErrors, "Sum"), 20, 3, "The PSP is failing calls: payments are queued and retried")
	alarm("PSPDeadLetters", arrivals(props.Async.PSPCallsDLQ), 1, 1, "A PSP call failed five times: redrive after checking the order")
	alarm("OutboxDead", metric(metrics.OutboxDead, "Sum"), 1, 1, "An outbox message (ticket mail, payment cancel) failed every try and was set aside: find its 'outbox message dead' log line, fix the cause, redrive it (docs/payments.md)")
	alarm("RefundsFailed", metric(metrics.RefundsFailed, "Sum"), 1, 1, "The PSP refused a refund or never answered it: money is still owed. The console lists it (refund failures, GET /api/organizer/refund-failures); fix the cause, refund again (docs/payments.md)")
	alarm("FailedInvocations", arrivals(props.Async.FailedInvocations), 1, 1, "A scheduled function (admit, sweep, fulfil, reconcile) failed all retries")
	alarm("APIThrottles", props.App.Functions["api"].MetricThrottles(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1))}), 1, 2, "The API function is throttled: raise account concurrency before the on-sale")
	for _, db := range props.Data.Databases() {
		alarm("SessionsPinned"+db.Name, db.PinnedSessions(), 1, PinnedMinutes, "RDS Proxy of "+db.Name+" holds database connections pinned to client sessions: a statement keeps session state (SET, a named prepared statement, a session advisory lock…), so the proxy stopped multiplexing; find it in the proxy's log and docs/database.md")
	}
	alarm("AdmitStalled", awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String("IF(waiting > 0 AND admitted == 0, 1, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{"waiting": metric(metrics.QueueWaiting, "Maximum"), "admitted": metric(metrics.Admitted, "Sum")},
		Period:       awscdk.Duration_Minutes(jsii.Number(1))}), 1, 3, "Fans wait but nobody is admitted: check the admit schedule")
	return st
}

// hashDir returns a short hash of the files under dir ("" when unreadable).
func hashDir(dir string) string {
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".sql" {
			b, _ := os.ReadFile(p)
			h.Write([]byte(p))
			h.Write(b)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16]
}
