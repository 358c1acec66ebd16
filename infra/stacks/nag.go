package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// checkRules applies cdk-nag's AwsSolutions and Serverless packs to every
// stack under scope: an unsuppressed finding is a synthesis error, so
// `cdk synth`, `cdk deploy` and the stack tests all stop on it. Each
// suppression sits next to the resource it excuses, with its reason.
func checkRules(scope constructs.Construct) {
	props := &cdknag.NagPackProps{Verbose: jsii.Bool(true), Reports: jsii.Bool(false)}
	awscdk.Aspects_Of(scope).Add(cdknag.NewAwsSolutionsChecks(props), nil)
	awscdk.Aspects_Of(scope).Add(cdknag.NewServerlessChecks(props), nil)
}

// suppress excuses construct (and its children) from rules, for reason.
func suppress(construct constructs.IConstruct, reason string, rules ...string) {
	var s []*cdknag.NagPackSuppression
	for _, r := range rules {
		s = append(s, &cdknag.NagPackSuppression{Id: jsii.String(r), Reason: jsii.String(reason)})
	}
	cdknag.NagSuppressions_AddResourceSuppressions(construct, &s, jsii.Bool(true))
}
