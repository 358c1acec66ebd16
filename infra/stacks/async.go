package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// AsyncStack holds the queues: PSP calls (FIFO, one payment attempt per
// order at a time) and the dead-letter queues of every asynchronous path.
type AsyncStack struct {
	awscdk.Stack
	PSPCalls    awssqs.Queue
	PSPCallsDLQ awssqs.Queue
	// FailedInvocations receives scheduled and asynchronous invocations of
	// admit, sweep, fulfil and reconcile that failed all their retries.
	FailedInvocations awssqs.Queue
}

// NewAsyncStack creates the queues, encrypted, with dead-letter queues.
func NewAsyncStack(scope constructs.Construct, id string, props *awscdk.StackProps) *AsyncStack {
	st := awscdk.NewStack(scope, &id, props)
	a := &AsyncStack{Stack: st}
	a.PSPCallsDLQ = awssqs.NewQueue(st, jsii.String("PSPCallsDLQ"), &awssqs.QueueProps{
		Fifo: jsii.Bool(true), Encryption: awssqs.QueueEncryption_SQS_MANAGED, EnforceSSL: jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	a.PSPCalls = awssqs.NewQueue(st, jsii.String("PSPCalls"), &awssqs.QueueProps{
		Fifo: jsii.Bool(true), ContentBasedDeduplication: jsii.Bool(false),
		Encryption: awssqs.QueueEncryption_SQS_MANAGED, EnforceSSL: jsii.Bool(true),
		// > 6× the consumer's timeout, as Lambda's SQS integration advises
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(180)),
		DeadLetterQueue:   &awssqs.DeadLetterQueue{Queue: a.PSPCallsDLQ, MaxReceiveCount: jsii.Number(5)},
	})
	a.FailedInvocations = awssqs.NewQueue(st, jsii.String("FailedInvocations"), &awssqs.QueueProps{
		Encryption: awssqs.QueueEncryption_SQS_MANAGED, EnforceSSL: jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14))})
	for _, q := range []awssqs.Queue{a.PSPCallsDLQ, a.FailedInvocations} {
		suppress(q, "a dead-letter queue itself: what lands here stays for review and redrive (alarmed in the ops stack)",
			"AwsSolutions-SQS3", "Serverless-SQSRedrivePolicy")
	}
	return a
}
