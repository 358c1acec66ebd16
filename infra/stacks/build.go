package stacks

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Config is what `cdk deploy -c key=value` may set (see cdk.json).
type Config struct {
	Name           string // stack name prefix
	Account        string // empty: environment-agnostic templates
	Region         string
	Shards         int
	Production     bool
	Dist           string // dist/ of make build
	Migrations     string // shared/migrate
	PublicURL      string
	PSPURL         string
	PSPRate        int
	PSPConcurrency int
	MailFrom       string
	PreSaleECPU    float64
}

// Deployment is every stack of one catraca deployment.
type Deployment struct {
	Network *NetworkStack
	Data    *DataStack
	Async   *AsyncStack
	App     *AppStack
	Edge    *EdgeStack
	Ops     awscdk.Stack
}

// Build declares a whole deployment under scope.
func Build(scope constructs.Construct, c Config) *Deployment {
	props := func() awscdk.StackProps {
		p := awscdk.StackProps{Tags: &map[string]*string{"app": jsii.String("catraca")}}
		if c.Account != "" {
			p.Env = &awscdk.Environment{Account: jsii.String(c.Account), Region: jsii.String(c.Region)}
			p.CrossRegionReferences = jsii.Bool(c.Region != "us-east-1")
		}
		return p
	}
	d := &Deployment{}
	d.Network = NewNetworkStack(scope, c.Name+"-network", &NetworkStackProps{StackProps: props(), Production: c.Production})
	d.Data = NewDataStack(scope, c.Name+"-data", &DataStackProps{StackProps: props(), Vpc: d.Network.Vpc, Shards: c.Shards,
		Production: c.Production, PreSaleECPU: c.PreSaleECPU})
	asyncProps := props()
	d.Async = NewAsyncStack(scope, c.Name+"-async", &asyncProps)
	d.App = NewAppStack(scope, c.Name+"-app", &AppStackProps{StackProps: props(), Vpc: d.Network.Vpc, Data: d.Data, Async: d.Async,
		Dist: c.Dist, PublicURL: c.PublicURL, MailFrom: c.MailFrom, PSPURL: c.PSPURL, PSPRate: c.PSPRate, PSPConcurrency: c.PSPConcurrency})
	edgeProps := props()
	if c.Account != "" {
		// WAF for CloudFront and the function's key-value store live in us-east-1.
		edgeProps.Env = &awscdk.Environment{Account: jsii.String(c.Account), Region: jsii.String("us-east-1")}
	}
	d.Edge = NewEdgeStack(scope, c.Name+"-edge", &EdgeStackProps{StackProps: edgeProps, APIURL: d.App.APIURL, Keys: d.App.EdgeKeys,
		OriginShieldRegion: c.Region, Production: c.Production})
	d.Ops = NewOpsStack(scope, c.Name+"-ops", &OpsStackProps{StackProps: props(), App: d.App, Async: d.Async, Shards: c.Shards, Migrations: c.Migrations})
	return d
}
