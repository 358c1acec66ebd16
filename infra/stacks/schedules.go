package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Scheduled are the functions EventBridge Scheduler invokes, and how often.
var Scheduled = map[string]string{"admit": "rate(1 minute)", "sweep": "rate(1 minute)", "fulfil": "rate(1 minute)", "reconcile": "rate(5 minutes)"}

// schedule invokes the scheduled functions with EventBridge Scheduler once
// migrations have run: the schedules live in the ops stack and depend on
// every migration resource, so on a first deployment sweep and fulfil do
// not fail every minute against empty databases (filling the dead-letter
// queue and raising alarms before anyone sells a ticket). Failed
// invocations land in the dead-letter queue.
func schedule(st awscdk.Stack, app *AppStack, async *AsyncStack, migrations []constructs.IConstruct) {
	role := awsiam.NewRole(st, jsii.String("SchedulerRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), nil)})
	async.FailedInvocations.GrantSendMessages(role)
	suppress(role, "GrantInvoke's <function>:* covers the function's versions and aliases, of the scheduled functions only", "AwsSolutions-IAM5")
	for _, name := range Functions {
		rate, ok := Scheduled[name]
		if !ok {
			continue
		}
		fn := app.Functions[name]
		fn.GrantInvoke(role)
		s := awsscheduler.NewCfnSchedule(st, jsii.String(title(name)+"Schedule"), &awsscheduler.CfnScheduleProps{
			ScheduleExpression: jsii.String(rate),
			FlexibleTimeWindow: &awsscheduler.CfnSchedule_FlexibleTimeWindowProperty{Mode: jsii.String("OFF")},
			Target: &awsscheduler.CfnSchedule_TargetProperty{
				Arn: fn.FunctionArn(), RoleArn: role.RoleArn(),
				RetryPolicy:      &awsscheduler.CfnSchedule_RetryPolicyProperty{MaximumRetryAttempts: jsii.Number(2), MaximumEventAgeInSeconds: jsii.Number(120)},
				DeadLetterConfig: &awsscheduler.CfnSchedule_DeadLetterConfigProperty{Arn: async.FailedInvocations.QueueArn()},
			},
		})
		for _, m := range migrations {
			s.Node().AddDependency(m)
		}
	}
}
