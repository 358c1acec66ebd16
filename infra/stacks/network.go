// Package stacks declares catraca's AWS deployment with the CDK: one
// NewXStack per concern (network, data, app, async, edge, operations).
// The Go app in infra/cdk wires them; stacks_test asserts on the templates.
package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// NetworkStackProps sizes the VPC.
type NetworkStackProps struct {
	awscdk.StackProps
	Production bool
	// Mail adds the SES endpoint (fulfil sends the ticket emails).
	Mail bool
}

// NetworkStack is the VPC every function, database and cache lives in.
type NetworkStack struct {
	awscdk.Stack
	Vpc awsec2.Vpc
}

// NewNetworkStack creates a VPC across 3 AZs: public subnets only for NAT
// (the PSP and the CloudFront KeyValueStore API are on the internet),
// private subnets for functions, isolated subnets for data. The AWS APIs
// the functions call on every on-sale (SQS, Secrets Manager, SES) go
// through VPC endpoints, not the NAT; metrics are log lines (EMF) and need
// none.
func NewNetworkStack(scope constructs.Construct, id string, props *NetworkStackProps) *NetworkStack {
	st := awscdk.NewStack(scope, &id, &props.StackProps)
	nats := 1.0
	if props.Production {
		nats = 3 // one per AZ: an AZ outage must not cut payments
	}
	vpc := awsec2.NewVpc(st, jsii.String("Vpc"), &awsec2.VpcProps{
		MaxAzs:      jsii.Number(3),
		NatGateways: jsii.Number(nats),
		SubnetConfiguration: &[]*awsec2.SubnetConfiguration{
			// Only the NAT gateways live here, with their own Elastic IPs.
			{Name: jsii.String("public"), SubnetType: awsec2.SubnetType_PUBLIC, CidrMask: jsii.Number(24), MapPublicIpOnLaunch: jsii.Bool(false)},
			{Name: jsii.String("app"), SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS, CidrMask: jsii.Number(20)},
			{Name: jsii.String("data"), SubnetType: awsec2.SubnetType_PRIVATE_ISOLATED, CidrMask: jsii.Number(24)},
		},
		// Restricting the default group needs a Node.js custom resource; no
		// resource here uses the default group.
		RestrictDefaultSecurityGroup: jsii.Bool(false),
	})
	vpc.AddFlowLog(jsii.String("FlowLog"), &awsec2.FlowLogOptions{
		Destination: awsec2.FlowLogDestination_ToCloudWatchLogs(awslogs.NewLogGroup(st, jsii.String("FlowLogs"), &awslogs.LogGroupProps{
			Retention: awslogs.RetentionDays_ONE_YEAR, RemovalPolicy: awscdk.RemovalPolicy_DESTROY}), nil),
		TrafficType: awsec2.FlowLogTrafficType_REJECT})
	vpc.AddGatewayEndpoint(jsii.String("S3"), &awsec2.GatewayVpcEndpointOptions{Service: awsec2.GatewayVpcEndpointAwsService_S3()})
	app := &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS}
	endpoints := map[string]awsec2.InterfaceVpcEndpointAwsService{
		"Sqs":            awsec2.InterfaceVpcEndpointAwsService_SQS(),
		"SecretsManager": awsec2.InterfaceVpcEndpointAwsService_SECRETS_MANAGER(),
	}
	if props.Mail {
		endpoints["Email"] = awsec2.InterfaceVpcEndpointAwsService_EMAIL()
	}
	for name, svc := range endpoints {
		vpc.AddInterfaceEndpoint(jsii.String(name), &awsec2.InterfaceVpcEndpointOptions{Service: svc, Subnets: app, PrivateDnsEnabled: jsii.Bool(true)})
	}
	return &NetworkStack{Stack: st, Vpc: vpc}
}
