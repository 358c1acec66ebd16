package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Config is what `cdk deploy -c key=value` may set (see cdk.json).
type Config struct {
	Name    string // stack name prefix
	Account string // empty: environment-agnostic templates
	Region  string
	// AZs are the region's availability zones; given, synthesis needs no
	// AWS credentials to look them up (make synth, the stack tests).
	AZs        []string
	Shards     int
	Production bool
	Dist       string // dist/ of make build
	Migrations string // shared/migrate
	Site       string // edge/web
	PublicURL  string // default https://<Domain> when a domain is set
	// Domain is the site's custom domain ("" serves *.cloudfront.net);
	// CertificateArn an ACM certificate for it in us-east-1, or "" to have
	// one issued (DNS validation: add the CNAME it asks for).
	Domain         string
	CertificateArn string
	PSPURL         string
	PSPRate        int
	PSPConcurrency int
	// APIConcurrency and AdmitConcurrency reserve Lambda concurrency.
	APIConcurrency, AdmitConcurrency int
	MailFrom                         string
	AlarmEmail                       string // subscribed to the alarms
	PreSaleECPU                      float64
}

// Deployment is every stack of one catraca deployment.
type Deployment struct {
	Network *NetworkStack
	Data    *DataStack
	Async   *AsyncStack
	App     *AppStack
	Edge    *EdgeStack
	Global  *GlobalStack
	Ops     awscdk.Stack
}

// Build declares a whole deployment under scope. Every stack is in the
// app's region except the global one: a CLOUDFRONT-scope web ACL (and the
// certificate of a custom domain) can only live in us-east-1. The
// distribution sits with the function it fronts, so the permissions its
// OAC origin adds are created in the function's own region
// (aws/aws-cdk#34536: Lambda permissions cannot be created across regions).
func Build(scope constructs.Construct, c Config) *Deployment {
	if c.Account != "" && len(c.AZs) > 0 {
		scope.Node().SetContext(jsii.String(fmt.Sprintf("availability-zones:account=%s:region=%s", c.Account, c.Region)), c.AZs)
	}
	props := func() awscdk.StackProps {
		p := awscdk.StackProps{Tags: &map[string]*string{"app": jsii.String("catraca")}}
		if c.Account != "" {
			p.Env = &awscdk.Environment{Account: jsii.String(c.Account), Region: jsii.String(c.Region)}
			p.CrossRegionReferences = jsii.Bool(c.Region != "us-east-1")
		}
		return p
	}
	if c.Domain != "" && c.PublicURL == "" {
		c.PublicURL = "https://" + c.Domain
	}
	publicURLParameter := "" // the distribution's URL, known once it exists
	if c.PublicURL == "" {
		publicURLParameter = "/" + c.Name + "/public-url"
	}
	d := &Deployment{}
	d.Network = NewNetworkStack(scope, c.Name+"-network", &NetworkStackProps{StackProps: props(), Production: c.Production, Mail: c.MailFrom != ""})
	d.Data = NewDataStack(scope, c.Name+"-data", &DataStackProps{StackProps: props(), Vpc: d.Network.Vpc, Shards: c.Shards,
		Production: c.Production, PreSaleECPU: c.PreSaleECPU})
	asyncProps := props()
	d.Async = NewAsyncStack(scope, c.Name+"-async", &asyncProps)
	d.App = NewAppStack(scope, c.Name+"-app", &AppStackProps{StackProps: props(), Vpc: d.Network.Vpc, Data: d.Data, Async: d.Async,
		Dist: c.Dist, PublicURL: c.PublicURL, PublicURLParameter: publicURLParameter, MailFrom: c.MailFrom, PSPURL: c.PSPURL, PSPRate: c.PSPRate, PSPConcurrency: c.PSPConcurrency,
		APIConcurrency: c.APIConcurrency, AdmitConcurrency: c.AdmitConcurrency})
	globalProps := props()
	if c.Account != "" {
		globalProps.Env = &awscdk.Environment{Account: jsii.String(c.Account), Region: jsii.String("us-east-1")}
	}
	issue := "" // the domain to issue a certificate for
	if c.CertificateArn == "" {
		issue = c.Domain
	}
	d.Global = NewGlobalStack(scope, c.Name+"-global", &GlobalStackProps{StackProps: globalProps, Domain: issue})
	cert := optional(c.CertificateArn)
	if d.Global.Certificate != nil {
		cert = d.Global.Certificate.CertificateArn()
	}
	d.Edge = NewEdgeStack(scope, c.Name+"-edge", &EdgeStackProps{StackProps: props(), APIURL: d.App.APIURL, WebhookURL: d.App.WebhookURL,
		Keys: d.App.EdgeKeys, WebACLArn: d.Global.WebACL.AttrArn(), Domain: c.Domain, CertificateArn: cert, OriginShieldRegion: shieldFor(c.Region), Production: c.Production, SiteDir: c.Site,
		PublicURLParameter: publicURLParameter})
	checkRules(scope)
	d.Ops = NewOpsStack(scope, c.Name+"-ops", &OpsStackProps{StackProps: props(), App: d.App, Async: d.Async, Data: d.Data, Shards: c.Shards, Migrations: c.Migrations,
		AlarmEmail: c.AlarmEmail})
	return d
}
