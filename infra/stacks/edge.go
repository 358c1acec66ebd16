package stacks

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfrontorigins"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3assets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3deployment"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsssm"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/catraca/catraca/edge"
)

// EdgeStackProps points CloudFront at the API.
type EdgeStackProps struct {
	awscdk.StackProps
	// APIURL is reached through OAC; WebhookURL, open to the PSP, without.
	APIURL     awslambda.IFunctionUrl
	WebhookURL awslambda.IFunctionUrl
	// WebACLArn is the global stack's web ACL (it lives in us-east-1).
	WebACLArn *string
	// Domain and CertificateArn (us-east-1) serve the site on a custom
	// domain with TLS 1.2+; without them it is on *.cloudfront.net.
	Domain         string
	CertificateArn *string
	// Keys is the KeyValueStore of the viewer-request function.
	Keys awscloudfront.IKeyValueStore
	// OriginShieldRegion is the region of the API (one origin request per
	// cache key and second for the whole distribution).
	OriginShieldRegion string
	Production         bool
	// SiteDir is edge/web, uploaded to the site bucket on every deployment.
	SiteDir string
	// PublicURLParameter, when set, receives the distribution's URL for
	// the functions to read (no custom domain).
	PublicURLParameter string
}

// EdgeStack is what fans reach: CloudFront, its function, the site bucket
// and the access logs. It is deployed in the app's region, next to the
// functions its origins invoke; only the web ACL is in us-east-1.
type EdgeStack struct {
	awscdk.Stack
	Distribution awscloudfront.Distribution
	Site         awss3.Bucket
}

// NewEdgeStack builds the distribution from edge.Behaviors, the same table
// the local gateway routes by, so caching behaves alike in both.
func NewEdgeStack(scope constructs.Construct, id string, props *EdgeStackProps) *EdgeStack {
	st := awscdk.NewStack(scope, &id, &props.StackProps)
	e := &EdgeStack{Stack: st}
	logs := e.buckets(props.Production)
	def, behaviors := e.behaviors(props)
	e.distribution(props, logs, def, behaviors)
	e.upload(props.SiteDir)
	if props.PublicURLParameter != "" {
		awsssm.NewStringParameter(st, jsii.String("PublicURL"), &awsssm.StringParameterProps{
			ParameterName: jsii.String(props.PublicURLParameter),
			StringValue:   jsii.String("https://" + *e.Distribution.DistributionDomainName()),
			Description:   jsii.String("The URL fans use; the functions read it at cold start."),
		})
	}
	awscdk.NewCfnOutput(st, jsii.String("URL"), &awscdk.CfnOutputProps{Value: jsii.String("https://" + *e.Distribution.DistributionDomainName())})
	awscdk.NewCfnOutput(st, jsii.String("DistributionId"), &awscdk.CfnOutputProps{Value: e.Distribution.DistributionId()})
	awscdk.NewCfnOutput(st, jsii.String("SiteBucket"), &awscdk.CfnOutputProps{Value: e.Site.BucketName()})
	return e
}

// buckets creates the site bucket and the access-log bucket it returns.
func (e *EdgeStack) buckets(production bool) awss3.Bucket {
	removal := awscdk.RemovalPolicy_DESTROY
	if production {
		removal = awscdk.RemovalPolicy_RETAIN
	}
	logs := awss3.NewBucket(e.Stack, jsii.String("Logs"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(), Encryption: awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL: jsii.Bool(true), ObjectOwnership: awss3.ObjectOwnership_OBJECT_WRITER, RemovalPolicy: removal,
		LifecycleRules: &[]*awss3.LifecycleRule{{Expiration: awscdk.Duration_Days(jsii.Number(90))}}})
	suppress(logs, "the access-log bucket itself: logging it into itself would loop", "AwsSolutions-S1")
	e.Site = awss3.NewBucket(e.Stack, jsii.String("Site"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(), Encryption: awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL: jsii.Bool(true), Versioned: jsii.Bool(true), RemovalPolicy: removal,
		ServerAccessLogsBucket: logs, ServerAccessLogsPrefix: jsii.String("s3/site/"),
		// Old versions are there to roll a bad upload back, not forever.
		LifecycleRules: &[]*awss3.LifecycleRule{{NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(30))}}})
	return logs
}

// behaviors returns the default behavior and the others by path pattern,
// one per edge.Behaviors entry, each with the viewer-request function
// and the security headers.
func (e *EdgeStack) behaviors(props *EdgeStackProps) (*awscloudfront.BehaviorOptions, map[string]*awscloudfront.BehaviorOptions) {
	fn := awscloudfront.NewFunction(e.Stack, jsii.String("ViewerRequest"), &awscloudfront.FunctionProps{
		Code: awscloudfront.FunctionCode_FromInline(jsii.String(edge.FunctionSource())), Runtime: awscloudfront.FunctionRuntime_JS_2_0(),
		KeyValueStore: props.Keys, Comment: jsii.String("session and admission checks, cache-key hygiene, app routes")})
	assoc := &[]*awscloudfront.FunctionAssociation{{Function: fn, EventType: awscloudfront.FunctionEventType_VIEWER_REQUEST}}
	headers := responseHeaders(e.Stack)
	origins := e.origins(props)
	behaviors := map[string]*awscloudfront.BehaviorOptions{}
	var def *awscloudfront.BehaviorOptions
	for i, b := range edge.Behaviors {
		o := &awscloudfront.BehaviorOptions{
			ViewerProtocolPolicy: awscloudfront.ViewerProtocolPolicy_REDIRECT_TO_HTTPS, Compress: jsii.Bool(true),
			FunctionAssociations: assoc, ResponseHeadersPolicy: headers, Origin: origins[b.Origin],
		}
		if o.Origin == nil {
			o.Origin = origins["api"]
		}
		if b.Cached {
			o.AllowedMethods = awscloudfront.AllowedMethods_ALLOW_GET_HEAD_OPTIONS()
			o.CachePolicy = awscloudfront.NewCachePolicy(e.Stack, jsii.String(fmt.Sprintf("Cache%d", i)), &awscloudfront.CachePolicyProps{
				Comment:                    jsii.String("catraca " + b.PathPattern + ": origin Cache-Control, path and query only"),
				MinTtl:                     awscdk.Duration_Seconds(jsii.Number(b.MinTTL.Seconds())),
				DefaultTtl:                 awscdk.Duration_Seconds(jsii.Number(b.DefaultTTL.Seconds())),
				MaxTtl:                     awscdk.Duration_Seconds(jsii.Number(b.MaxTTL.Seconds())),
				QueryStringBehavior:        awscloudfront.CacheQueryStringBehavior_All(),
				HeaderBehavior:             awscloudfront.CacheHeaderBehavior_None(),
				CookieBehavior:             awscloudfront.CacheCookieBehavior_None(),
				EnableAcceptEncodingGzip:   jsii.Bool(true),
				EnableAcceptEncodingBrotli: jsii.Bool(true),
			})
		} else {
			o.AllowedMethods = awscloudfront.AllowedMethods_ALLOW_ALL()
			o.CachePolicy = awscloudfront.CachePolicy_CACHING_DISABLED()
			o.OriginRequestPolicy = awscloudfront.OriginRequestPolicy_ALL_VIEWER_EXCEPT_HOST_HEADER()
		}
		if b.PathPattern == "*" {
			def = o
		} else {
			behaviors[b.PathPattern] = o
		}
	}
	return def, behaviors
}

// origins are the API (through OAC), the PSP's webhook and the site, by
// the names edge.Behaviors uses.
func (e *EdgeStack) origins(props *EdgeStackProps) map[string]awscloudfront.IOrigin {
	return map[string]awscloudfront.IOrigin{
		"api": awscloudfrontorigins.FunctionUrlOrigin_WithOriginAccessControl(props.APIURL, &awscloudfrontorigins.FunctionUrlOriginWithOACProps{
			OriginShieldEnabled: jsii.Bool(props.OriginShieldRegion != ""), OriginShieldRegion: optional(props.OriginShieldRegion),
			ReadTimeout: awscdk.Duration_Seconds(jsii.Number(30))}),
		// The PSP cannot sign its POSTs for OAC (x-amz-content-sha256): the
		// webhook's URL is public and its HMAC signature is the authentication.
		"webhook": awscloudfrontorigins.NewFunctionUrlOrigin(props.WebhookURL, &awscloudfrontorigins.FunctionUrlOriginProps{
			ReadTimeout: awscdk.Duration_Seconds(jsii.Number(30))}),
		"site": awscloudfrontorigins.S3BucketOrigin_WithOriginAccessControl(e.Site, nil),
	}
}

// distribution creates the distribution: the custom domain and its
// certificate if any, TLS 1.2+, HTTP/3, the web ACL and access logs.
func (e *EdgeStack) distribution(props *EdgeStackProps, logs awss3.Bucket, def *awscloudfront.BehaviorOptions, behaviors map[string]*awscloudfront.BehaviorOptions) {
	var domains *[]*string
	var cert awscertificatemanager.ICertificate
	if props.Domain != "" {
		domains = &[]*string{jsii.String(props.Domain)}
		cert = awscertificatemanager.Certificate_FromCertificateArn(e.Stack, jsii.String("Certificate"), props.CertificateArn)
	}
	e.Distribution = awscloudfront.NewDistribution(e.Stack, jsii.String("Distribution"), &awscloudfront.DistributionProps{
		DomainNames:            domains,
		Certificate:            cert,
		DefaultBehavior:        def,
		AdditionalBehaviors:    &behaviors,
		DefaultRootObject:      jsii.String("index.html"),
		HttpVersion:            awscloudfront.HttpVersion_HTTP2_AND_3,
		MinimumProtocolVersion: awscloudfront.SecurityPolicyProtocol_TLS_V1_2_2021,
		EnableLogging:          jsii.Bool(true),
		LogBucket:              logs,
		LogFilePrefix:          jsii.String("cloudfront/"),
		WebAclId:               props.WebACLArn,
		Comment:                jsii.String("catraca"),
	})
	// The OAC permissions name the distribution by ARN; the account pins
	// them further, as a literal a template checker can read.
	for _, c := range *e.Stack.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		if p, ok := c.(awslambda.CfnPermission); ok {
			p.SetSourceAccount(e.Stack.Account())
		}
	}
	if props.Domain == "" {
		suppress(e.Distribution, "trying it out on *.cloudfront.net, whose certificate CloudFront manages (TLSv1 policy); "+
			"production sets the domain context and gets TLSv1.2_2021 (docs/deploy.md)", "AwsSolutions-CFR4")
	}
}

// upload copies the site into its bucket as part of the deployment (CDK's
// BucketDeployment), with edge.SiteCacheControl's headers: the app shell
// revalidates (no-cache: no invalidation needed), the rest is cached for a
// day.
func (e *EdgeStack) upload(dir string) {
	shell := "index.html"
	for _, part := range []struct {
		id      string
		exclude []string
		file    string
	}{{"SiteAssets", []string{shell}, "app/main.js"}, {"SiteShell", []string{"*", "!" + shell}, shell}} {
		awss3deployment.NewBucketDeployment(e.Stack, jsii.String(part.id), &awss3deployment.BucketDeploymentProps{
			Sources:           &[]awss3deployment.ISource{awss3deployment.Source_Asset(jsii.String(dir), &awss3assets.AssetOptions{Exclude: jsii.Strings(part.exclude...)})},
			DestinationBucket: e.Site,
			Exclude:           jsii.Strings(part.exclude...),
			Prune:             jsii.Bool(false), // the other part's files stay
			CacheControl:      &[]awss3deployment.CacheControl{awss3deployment.CacheControl_FromString(jsii.String(edge.SiteCacheControl(part.file)))},
			MemoryLimit:       jsii.Number(512),
		})
	}
	for _, c := range *e.Stack.Node().Children() {
		if strings.HasPrefix(*c.Node().Id(), "Custom::CDKBucketDeployment") {
			suppress(c, "CDK's BucketDeployment handler (Python, AWS CLI layer): it runs only during deployments, with the role CDK scopes to "+
				"the asset and site buckets (its wildcards are object keys) and AWS's basic execution policy",
				"AwsSolutions-IAM4", "AwsSolutions-IAM5", "AwsSolutions-L1", "Serverless-LambdaDLQ", "Serverless-LambdaDefaultMemorySize",
				"Serverless-LambdaLatestVersion", "Serverless-LambdaTracing")
		}
	}
}

// responseHeaders is the response-headers policy built from
// edge/function/headers.json (the local gateway sends the same headers).
func responseHeaders(st awscdk.Stack) awscloudfront.ResponseHeadersPolicy {
	h := edge.SecurityHeaders()
	return awscloudfront.NewResponseHeadersPolicy(st, jsii.String("SecurityHeaders"), &awscloudfront.ResponseHeadersPolicyProps{
		Comment: jsii.String("catraca security headers (edge/function/headers.json)"),
		SecurityHeadersBehavior: &awscloudfront.ResponseSecurityHeadersBehavior{
			ContentSecurityPolicy: &awscloudfront.ResponseHeadersContentSecurityPolicy{ContentSecurityPolicy: jsii.String(h["content-security-policy"]), Override: jsii.Bool(true)},
			StrictTransportSecurity: &awscloudfront.ResponseHeadersStrictTransportSecurity{AccessControlMaxAge: awscdk.Duration_Days(jsii.Number(730)),
				IncludeSubdomains: jsii.Bool(true), Preload: jsii.Bool(true), Override: jsii.Bool(true)},
			FrameOptions:       &awscloudfront.ResponseHeadersFrameOptions{FrameOption: awscloudfront.HeadersFrameOption_DENY, Override: jsii.Bool(true)},
			ContentTypeOptions: &awscloudfront.ResponseHeadersContentTypeOptions{Override: jsii.Bool(true)},
			ReferrerPolicy: &awscloudfront.ResponseHeadersReferrerPolicy{
				ReferrerPolicy: awscloudfront.HeadersReferrerPolicy_STRICT_ORIGIN_WHEN_CROSS_ORIGIN, Override: jsii.Bool(true)},
		},
		CustomHeadersBehavior: &awscloudfront.ResponseCustomHeadersBehavior{CustomHeaders: &[]*awscloudfront.ResponseCustomHeader{
			{Header: jsii.String("Permissions-Policy"), Value: jsii.String(h["permissions-policy"]), Override: jsii.Bool(true)}}},
	})
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
