package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
)

// SearchSnapshotKey is the one object of the snapshots bucket: the
// search index's snapshot, written by sweep, read by new API instances.
const SearchSnapshotKey = "search/index.gob.gz"

// searchSnapshots creates the bucket of the search index's snapshot
// (searchindex/snapshot.go): private, SSE-S3, TLS only, versioned with old
// versions gone after a day (a snapshot is rebuilt every 10 minutes).
// Retained when the stack goes: an orphan bucket costs nothing, a
// non-empty bucket would stop the stack's deletion.
func (a *AppStack) searchSnapshots() {
	a.SearchSnapshots = awss3.NewBucket(a.Stack, jsii.String("SearchSnapshots"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(), Encryption: awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL: jsii.Bool(true), Versioned: jsii.Bool(true), RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		LifecycleRules: &[]*awss3.LifecycleRule{{NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(1))}}})
	suppress(a.SearchSnapshots, "holds one object our own functions write and read (the search snapshot, no personal data); "+
		"the access-log bucket is in the edge stack, which depends on this one", "AwsSolutions-S1")
}

// searchSnapshotURL is CATRACA_SEARCH_SNAPSHOT's value.
func (a *AppStack) searchSnapshotURL() string {
	return "s3://" + *a.SearchSnapshots.BucketName() + "/" + SearchSnapshotKey
}

// grantSearchSnapshots lets fn read the snapshot object, and write it when
// it builds snapshots (sweep): that one key, no listing, no deletion.
func (a *AppStack) grantSearchSnapshots(name string, fn awslambda.Function, env map[string]*string) {
	if env["CATRACA_SEARCH_SNAPSHOT"] == nil {
		return
	}
	actions := []string{"s3:GetObject"}
	if name == "sweep" {
		actions = append(actions, "s3:PutObject")
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(actions...),
		Resources: jsii.Strings(fmt.Sprintf("%s/%s", *a.SearchSnapshots.BucketArn(), SearchSnapshotKey)),
	}))
}
