package stacks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/edge"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/risk"
	"github.com/catraca/catraca/tools/testenv"
)

type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
	DependsOn  any            `json:"DependsOn"`
}

// template is one synthesized stack.
type template struct {
	Region    string
	Errors    []string            // cdk-nag and other synthesis errors
	Resources map[string]resource `json:"Resources"`
	Outputs   map[string]struct {
		Export struct{ Name string }
	} `json:"Outputs"`
}

// testRegion is where the tests deploy: not us-east-1, where every
// cross-region mistake would go unnoticed.
const testRegion = "eu-west-1"

// testShards is the deployment's shard count: the eight of the capacity
// plan, whose DSNs alone would pass Lambda's 4 KB of environment.
const testShards = 8

// production is the test's production deployment with a custom domain.
func production(t *testing.T) Config {
	return Config{Name: "test", Account: "123456789012", Region: testRegion, AZs: []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"},
		Shards: testShards, Production: true, Domain: "tickets.example.com",
		Migrations: filepath.Join(testenv.RepoRoot(), "shared", "migrate"), Site: filepath.Join(testenv.RepoRoot(), "edge", "web"),
		PSPURL: "https://psp.example.com", PSPRate: 90, PSPConcurrency: 5, AlarmEmail: "oncall@example.com",
		APIConcurrency: 900, AdmitConcurrency: 2}
}

// synth builds deployment c (functions from placeholder bootstraps: the
// binaries themselves are tested under the Lambda emulator) and returns
// every stack's template by stack name.
func synth(t *testing.T, c Config) (map[string]template, string) {
	t.Helper()
	dist := t.TempDir()
	for _, fn := range Functions {
		require.NoError(t, os.MkdirAll(filepath.Join(dist, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dist, fn, "bootstrap"), []byte("placeholder"), 0o755))
	}
	outdir := t.TempDir()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outdir)})
	c.Dist = dist
	d := Build(app, c)
	out := map[string]template{}
	for _, st := range []awscdk.Stack{d.Network.Stack, d.Data.Stack, d.Async.Stack, d.App.Stack, d.Edge.Stack, d.Global.Stack, d.Ops} {
		raw, err := json.Marshal(assertions.Template_FromStack(st, nil).ToJSON())
		require.NoError(t, err)
		var tpl template
		require.NoError(t, json.Unmarshal(raw, &tpl))
		tpl.Region = *st.Region()
		for _, m := range *assertions.Annotations_FromStack(st).FindError(jsii.String("*"), assertions.Match_AnyValue()) {
			tpl.Errors = append(tpl.Errors, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
		}
		out[*st.StackName()] = tpl
	}
	return out, outdir
}

func each(all map[string]template, typ string, fn func(stack, id string, r resource)) int {
	n := 0
	for stack, tpl := range all {
		for id, r := range tpl.Resources {
			if r.Type == typ {
				fn(stack, id, r)
				n++
			}
		}
	}
	return n
}

func TestTemplates(t *testing.T) {
	all, outdir := synth(t, production(t)) // once: every synthesis costs seconds of jsii
	t.Run("cdk-nag finds nothing unsuppressed", func(t *testing.T) { noNagFindings(t, all) })
	t.Run("cfn-guard finds nothing outside the reviewed Control Tower exceptions", func(t *testing.T) {
		noUnexpectedGuardFindings(t, outdir)
	})
	t.Run("each function's environment fits Lambda's 4 KB with eight shards", func(t *testing.T) {
		environmentsFit(t, all)
	})
	t.Run("each function gets the variables and secrets its configuration reads", func(t *testing.T) {
		functionsGetWhatTheyRead(t, all)
	})
	t.Run("deploys from any region", func(t *testing.T) { deploysFromAnyRegion(t, all) })
	t.Run("the PSP webhook reaches pspwebhook", func(t *testing.T) { webhookReachesPSPWebhook(t, all) })
	t.Run("the WAF body limits agree with the app", func(t *testing.T) { wafBodyLimitsAgreeWithTheApp(t, all) })
	t.Run("every proxy alarms on pinned sessions", func(t *testing.T) { proxiesAlarmOnPinnedSessions(t, all) })
	t.Run("only migrate reads a master secret; the others log in as their roles", func(t *testing.T) { functionsLogInAsTheirRoles(t, all) })

	t.Run("every function is provided.al2023 on arm64", func(t *testing.T) {
		ours := 0
		each(all, "AWS::Lambda::Function", func(_, id string, r resource) {
			if cdkHandler(id) {
				return
			}
			ours++
			require.Equal(t, "provided.al2023", r.Properties["Runtime"], id)
			require.Equal(t, []any{"arm64"}, r.Properties["Architectures"], id)
			require.NotNil(t, r.Properties["VpcConfig"], "%s runs in the VPC", id)
		})
		require.Equal(t, len(Functions), ours, "no helper functions in other runtimes but CDK's own")
	})

	t.Run("no database or cache is reachable from the internet", func(t *testing.T) {
		each(all, "AWS::RDS::DBInstance", func(_, id string, r resource) {
			require.NotEqual(t, true, r.Properties["PubliclyAccessible"], id)
		})
		each(all, "AWS::EC2::SecurityGroup", func(_, id string, r resource) {
			ingress, _ := r.Properties["SecurityGroupIngress"].([]any)
			for _, rule := range ingress {
				require.NotEqual(t, "0.0.0.0/0", rule.(map[string]any)["CidrIp"], id)
			}
		})
		each(all, "AWS::EC2::SecurityGroupIngress", func(_, id string, r resource) {
			require.Nil(t, r.Properties["CidrIp"], "%s: data ingress only from security groups", id)
		})
		require.Equal(t, 1+testShards, each(all, "AWS::RDS::DBCluster", func(string, string, resource) {}), "catalog + shards")
		require.Equal(t, 1+testShards, each(all, "AWS::RDS::DBProxy", func(_, id string, r resource) {
			require.Equal(t, true, r.Properties["RequireTLS"], id)
		}))
		require.Equal(t, 1+testShards, each(all, "AWS::RDS::DBProxyEndpoint", func(_, id string, r resource) {
			require.Equal(t, "READ_ONLY", r.Properties["TargetRole"], "%s: readers go through the proxy too", id)
		}))
	})

	t.Run("encryption at rest", func(t *testing.T) {
		each(all, "AWS::RDS::DBCluster", func(_, id string, r resource) {
			require.Equal(t, true, r.Properties["StorageEncrypted"], id)
			require.Equal(t, true, r.Properties["DeletionProtection"], "%s: production clusters", id)
		})
		each(all, "AWS::SQS::Queue", func(_, id string, r resource) {
			require.Equal(t, true, r.Properties["SqsManagedSseEnabled"], id)
		})
		require.Positive(t, each(all, "AWS::S3::Bucket", func(_, id string, r resource) {
			require.NotNil(t, r.Properties["BucketEncryption"], id)
			require.NotNil(t, r.Properties["PublicAccessBlockConfiguration"], id)
		}))
	})

	t.Run("every queue has a dead-letter queue", func(t *testing.T) {
		dlqs := map[string]bool{}
		find := func(v any) {
			b, _ := json.Marshal(v)
			for id := range all["test-async"].Resources {
				if strings.Contains(string(b), id) {
					dlqs[id] = true
				}
			}
		}
		each(all, "AWS::SQS::Queue", func(_, _ string, r resource) { find(r.Properties["RedrivePolicy"]) })
		each(all, "AWS::Scheduler::Schedule", func(_, id string, r resource) {
			dl := r.Properties["Target"].(map[string]any)["DeadLetterConfig"]
			require.NotNil(t, dl, "%s has a dead-letter queue", id)
			find(dl)
		})
		each(all, "AWS::SQS::Queue", func(_, id string, r resource) {
			require.True(t, r.Properties["RedrivePolicy"] != nil || dlqs[id], "queue %s has no dead-letter queue and is none", id)
		})
		require.Len(t, dlqs, 2)
	})

	t.Run("CloudFront reaches S3 and the API only through OAC, behind WAF", func(t *testing.T) {
		var origins []string
		each(all, "AWS::CloudFront::OriginAccessControl", func(_, _ string, r resource) {
			c := r.Properties["OriginAccessControlConfig"].(map[string]any)
			require.Equal(t, "always", c["SigningBehavior"])
			origins = append(origins, c["OriginAccessControlOriginType"].(string))
		})
		slices.Sort(origins)
		require.Equal(t, []string{"lambda", "s3"}, origins)
		urls := map[string]any{}
		each(all, "AWS::Lambda::Url", func(_, id string, r resource) {
			urls[strings.SplitN(id, "FunctionUrl", 2)[0]] = r.Properties["AuthType"]
		})
		require.Equal(t, map[string]any{"Api": "AWS_IAM", "Pspwebhook": "NONE"}, urls, "only the PSP's webhook is reachable without OAC")
		require.Equal(t, 1, each(all, "AWS::CloudFront::Distribution", func(_, _ string, r resource) {
			c := r.Properties["DistributionConfig"].(map[string]any)
			require.NotNil(t, c["WebACLId"], "WAF attached")
			require.NotNil(t, c["Logging"], "access logs")
			require.Equal(t, []any{"tickets.example.com"}, c["Aliases"])
			require.Equal(t, "TLSv1.2_2021", c["ViewerCertificate"].(map[string]any)["MinimumProtocolVersion"])
			require.Equal(t, "sni-only", c["ViewerCertificate"].(map[string]any)["SslSupportMethod"])
			require.Len(t, c["CacheBehaviors"], len(edge.Behaviors)-1)
		}))
		each(all, "AWS::WAFv2::WebACL", func(_, _ string, r resource) {
			b, _ := json.Marshal(r.Properties["Rules"])
			for _, want := range []string{"RateBasedStatement", "AWSManagedRulesBotControlRuleSet", "AWSManagedRulesCommonRuleSet"} {
				require.Contains(t, string(b), want)
			}
			// Bot Control's label reaches the origin as the header the
			// join's risk score reads (WAF prefixes x-amzn-waf-).
			var rules []struct {
				Name   string
				Action struct {
					Count struct {
						CustomRequestHandling struct{ InsertHeaders []struct{ Name string } }
					}
				}
			}
			require.NoError(t, json.Unmarshal(b, &rules))
			var inserted []string
			for _, r := range rules {
				for _, h := range r.Action.Count.CustomRequestHandling.InsertHeaders {
					inserted = append(inserted, "x-amzn-waf-"+h.Name)
				}
			}
			require.Contains(t, inserted, strings.ToLower(risk.BotHeader))
		})
		each(all, "AWS::CloudFront::Function", func(_, _ string, r resource) {
			require.Equal(t, "cloudfront-js-2.0", r.Properties["FunctionConfig"].(map[string]any)["Runtime"])
			require.Len(t, r.Properties["FunctionConfig"].(map[string]any)["KeyValueStoreAssociations"], 1, "the function reads the key-value store")
			require.LessOrEqual(t, len(r.Properties["FunctionCode"].(string)), 10240)
		})
	})

	t.Run("the admit function keeps the edge key-value store in sync", func(t *testing.T) {
		require.Equal(t, 1, each(all, "AWS::CloudFront::KeyValueStore", func(string, string, resource) {}))
		each(all, "AWS::Lambda::Function", func(_, id string, r resource) {
			if !cdkHandler(id) {
				vars := r.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
				require.Equal(t, strings.HasPrefix(id, "Admit"), vars["CATRACA_EDGE_KVS_ARN"] != nil, "%s: only admit knows the store", id)
				require.Equal(t, strings.HasPrefix(id, "Api"), vars["CATRACA_SHARD_READ_DSNS"] != nil, "%s: only the API reads from readers", id)
				if name, _ := functionOf(id); reads(name, "CATRACA_PUBLIC_URL") {
					require.Equal(t, "https://tickets.example.com", vars["CATRACA_PUBLIC_URL"], "%s: links point at the domain", id)
				}
			}
		})
		granted := 0
		each(all, "AWS::IAM::Policy", func(_, id string, r resource) {
			b, _ := json.Marshal(r.Properties["PolicyDocument"])
			if strings.Contains(string(b), "cloudfront-keyvaluestore:UpdateKeys") {
				require.True(t, strings.HasPrefix(id, "AdmitServiceRole"), "only admit writes the store, not %s", id)
				granted++
			}
		})
		require.Equal(t, 1, granted)
	})

	t.Run("operations: alarms, dashboard, migrations, PSP concurrency", func(t *testing.T) {
		watched := map[string]bool{}
		require.GreaterOrEqual(t, each(all, "AWS::CloudWatch::Alarm", func(_, id string, r resource) {
			require.Len(t, r.Properties["AlarmActions"], 1, "%s notifies the alarm topic", id)
			if name, ok := r.Properties["MetricName"].(string); ok {
				watched[name] = true
			}
		}), 5)
		require.True(t, watched[metrics.OutboxDead], "an outbox message set aside alarms: %v", watched)
		require.True(t, watched[metrics.RefundsFailed], "a refund refused or never answered alarms: %v", watched)
		require.Equal(t, 1, each(all, "AWS::SNS::Subscription", func(_, _ string, r resource) {
			require.Equal(t, "oncall@example.com", r.Properties["Endpoint"])
		}))
		require.Equal(t, 1, each(all, "AWS::CloudWatch::Dashboard", func(string, string, resource) {}))
		require.Equal(t, 1+testShards, each(all, "Custom::CatracaMigration", func(string, string, resource) {}))
		reserved := map[string]any{}
		each(all, "AWS::Lambda::Function", func(_, id string, r resource) {
			if n, ok := r.Properties["ReservedConcurrentExecutions"]; ok {
				reserved[strings.TrimRight(id, "0123456789ABCDEF")] = n
			}
		})
		require.Equal(t, map[string]any{"Pspqueue": 5.0, "Api": 900.0, "Admit": 2.0}, reserved)
		require.Equal(t, 3, each(all, "AWS::EC2::VPCEndpoint", func(string, string, resource) {}), "S3, SQS and Secrets Manager: no endpoint nothing calls")
	})

	t.Run("no IAM statement grants everything where a narrower grant exists", func(t *testing.T) {
		// These actions have no resource-level permissions in IAM.
		onlyStar := map[string]bool{"xray:PutTraceSegments": true, "xray:PutTelemetryRecords": true}
		each(all, "AWS::IAM::Policy", func(_, id string, r resource) {
			doc := r.Properties["PolicyDocument"].(map[string]any)
			for _, s := range doc["Statement"].([]any) {
				st := s.(map[string]any)
				actions := []any{st["Action"]}
				if list, ok := st["Action"].([]any); ok {
					actions = list
				}
				for _, a := range actions {
					require.NotEqual(t, "*", a, id)
					require.False(t, strings.HasSuffix(a.(string), ":*"), "%s grants %s", id, a)
				}
				if st["Resource"] == "*" {
					for _, a := range actions {
						require.True(t, onlyStar[a.(string)], "%s: %v on every resource", id, a)
					}
				}
			}
		})
	})
}

func noNagFindings(t *testing.T, all map[string]template) {
	var errs []string
	for _, tpl := range all {
		errs = append(errs, tpl.Errors...)
	}
	slices.Sort(errs)
	require.Empty(t, errs)
}

func noUnexpectedGuardFindings(t *testing.T, outdir string) {
	var unexpected []string
	for _, f := range controlTowerFindings(t, outdir) {
		if !excepted(f) {
			unexpected = append(unexpected, f)
		}
	}
	require.Empty(t, unexpected)
}

// TestTrialDeploymentWithoutDomain synthesizes what make synth's defaults
// deploy: no domain, production=false, no alarm email, two shards. It is
// as clean under cdk-nag and cfn-guard (the trial exceptions are the
// reviewed ones), serves *.cloudfront.net on CloudFront's certificate and
// leaves the public URL to the functions' default until publicUrl is set.
func TestTrialDeploymentWithoutDomain(t *testing.T) {
	c := production(t)
	c.Domain, c.Production, c.AlarmEmail, c.Shards, c.APIConcurrency = "", false, "", 2, 0
	all, outdir := synth(t, c)
	noNagFindings(t, all)
	noUnexpectedGuardFindings(t, outdir)
	require.Equal(t, 1, each(all, "AWS::CloudFront::Distribution", func(_, _ string, r resource) {
		d := r.Properties["DistributionConfig"].(map[string]any)
		require.Nil(t, d["Aliases"])
		require.Nil(t, d["ViewerCertificate"], "CloudFront's own *.cloudfront.net certificate")
	}))
	require.Zero(t, each(all, "AWS::CertificateManager::Certificate", func(string, string, resource) {}), "no certificate to issue")
	each(all, "AWS::RDS::DBCluster", func(_, id string, r resource) {
		require.Equal(t, false, r.Properties["DeletionProtection"], "%s: a trial can be destroyed", id)
	})
	require.Equal(t, 3, each(all, "Custom::CatracaMigration", func(string, string, resource) {}))
	// The distribution's URL is unknown until the edge stack exists: the
	// edge stack writes it to a parameter the functions read at cold start.
	const param = "/test/public-url"
	readers := 0
	for name, vars := range variables(t, all) {
		if url, ok := vars["CATRACA_PUBLIC_URL"]; ok {
			require.Equal(t, "{{ssm:"+param+"}}", url, name)
			readers++
		}
	}
	require.NotZero(t, readers, "the API reads the public URL")
	require.Equal(t, 1, each(all, "AWS::SSM::Parameter", func(stack, _ string, r resource) {
		require.True(t, strings.HasSuffix(stack, "-edge"), "written by the edge stack, not %s", stack)
		require.Equal(t, param, r.Properties["Name"])
		require.Contains(t, fmt.Sprint(r.Properties["Value"]), "DomainName", "the distribution's domain")
	}))
	granted := 0
	each(all, "AWS::IAM::Policy", func(_, _ string, r resource) {
		if s := fmt.Sprint(r.Properties["PolicyDocument"]); strings.Contains(s, "ssm:GetParameter") {
			require.Contains(t, s, "parameter"+param, "read only that parameter")
			granted++
		}
	})
	require.Equal(t, readers, granted, "each function that reads the URL may read the parameter, no other")
	require.Equal(t, 1, each(all, "AWS::SNS::Topic", func(string, string, resource) {}), "alarms notify a topic without subscribers")
	require.Zero(t, each(all, "AWS::SNS::Subscription", func(string, string, resource) {}))
}

// cdkHandler tells CDK's own custom-resource handlers (cross-region
// references, the site upload) from catraca's functions.
func cdkHandler(logicalID string) bool {
	return strings.HasPrefix(logicalID, "CustomCrossRegionExport") || strings.HasPrefix(logicalID, "CustomCDKBucketDeployment")
}

// refs returns the targets of every Ref, Fn::GetAtt and Fn::ImportValue in v.
func refs(v any, fn func(kind, target string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "Ref", "Fn::ImportValue":
				if s, ok := x.(string); ok {
					fn(k, s)
					continue
				}
			case "Fn::GetAtt":
				if l, ok := x.([]any); ok {
					fn(k, l[0].(string))
					continue
				}
			}
			refs(x, fn)
		}
	case []any:
		for _, x := range v {
			refs(x, fn)
		}
	}
}

// deploysFromAnyRegion checks the shape a first deploy outside
// us-east-1 needs: CloudFormation imports only reach stacks of their own
// region, a Lambda permission is created in its function's region, and the
// us-east-1 stack holds only what CloudFront requires from there.
func deploysFromAnyRegion(t *testing.T, all map[string]template) {
	exports := map[string]string{} // export name -> region
	for _, tpl := range all {
		for _, o := range tpl.Outputs {
			if o.Export.Name != "" {
				exports[o.Export.Name] = tpl.Region
			}
		}
	}
	for name, tpl := range all {
		if name == "test-global" {
			require.Equal(t, "us-east-1", tpl.Region)
		} else {
			require.Equal(t, testRegion, tpl.Region, "%s sits with the functions", name)
		}
		for id, r := range tpl.Resources {
			refs(r.Properties, func(kind, target string) {
				if kind == "Fn::ImportValue" {
					require.Equal(t, tpl.Region, exports[target], "%s/%s imports %s from another region", name, id, target)
				}
			})
			if r.Type != "AWS::Lambda::Permission" {
				continue
			}
			// The function must be this stack's or imported from this region.
			refs(r.Properties["FunctionName"], func(kind, target string) {
				if kind == "Fn::ImportValue" {
					return // checked above
				}
				require.Equal(t, "AWS::Lambda::Function", tpl.Resources[target].Type,
					"%s/%s: permission on %s, which is not a function of this stack (cross-region reference?)", name, id, target)
			})
		}
	}
	for _, r := range all["test-global"].Resources {
		require.Contains(t, []string{"AWS::WAFv2::WebACL", "AWS::CertificateManager::Certificate", "Custom::CrossRegionExportWriter", "AWS::Lambda::Function", "AWS::IAM::Role"}, r.Type,
			"the us-east-1 stack holds only the web ACL and the certificate (and CDK's export writer)")
	}
}

// webhookReachesPSPWebhook: the PSP's POSTs go to pspwebhook's own
// URL, unsigned (no OAC), past the bot and per-IP rules and the managed
// groups that inspect bodies.
func webhookReachesPSPWebhook(t *testing.T, all map[string]template) {
	require.Equal(t, "webhook", edge.Match("/api/psp/webhook").Origin)
	dist := all["test-edge"].Resources
	var cfg map[string]any
	for _, r := range dist {
		if r.Type == "AWS::CloudFront::Distribution" {
			cfg = r.Properties["DistributionConfig"].(map[string]any)
		}
	}
	origins := map[string]map[string]any{}
	for _, o := range cfg["Origins"].([]any) {
		o := o.(map[string]any)
		origins[o["Id"].(string)] = o
	}
	found := false
	for _, b := range cfg["CacheBehaviors"].([]any) {
		b := b.(map[string]any)
		if b["PathPattern"] != "/api/psp/webhook" {
			continue
		}
		found = true
		require.Contains(t, b["AllowedMethods"], "POST")
		o := origins[b["TargetOriginId"].(string)]
		require.Nil(t, o["OriginAccessControlId"], "the PSP cannot sign for OAC")
		var url []string
		refs(o["DomainName"], func(_, target string) { url = append(url, target) })
		require.Len(t, url, 1)
		require.Contains(t, url[0], "Pspwebhook", "routed to the pspwebhook function")
	}
	require.True(t, found, "a behavior for the webhook")

	for _, r := range all["test-global"].Resources {
		if r.Type != "AWS::WAFv2::WebACL" {
			continue
		}
		for _, rule := range r.Properties["Rules"].([]any) {
			rule := rule.(map[string]any)
			b, _ := json.Marshal(rule)
			if n := rule["Name"]; n == "RatePerIP" || n == "AWSManagedRulesBotControlRuleSet" ||
				n == "AWSManagedRulesCommonRuleSet" || n == "AWSManagedRulesKnownBadInputsRuleSet" { // those that inspect bodies
				require.Contains(t, string(b), `"NotStatement"`, n)
				require.Contains(t, string(b), `"SearchString":"/api/psp/webhook"`, "%s skips the webhook", n)
			}
		}
	}
}

// wafBodyLimitsAgreeWithTheApp: the core rule set's 8 KB body rule
// only counts; bodies over the app's limit are refused except on layout
// imports, which the app lets through up to their own larger limit.
func wafBodyLimitsAgreeWithTheApp(t *testing.T, all map[string]template) {
	n := each(all, "AWS::WAFv2::WebACL", func(_, _ string, r resource) {
		b, _ := json.Marshal(r.Properties)
		require.Contains(t, string(b), `"ActionToUse":{"Count":{}},"Name":"SizeRestrictions_BODY"`)
		require.Contains(t, string(b), `"DefaultSizeInspectionLimit":"KB_64"`)
		var size *resource
		for _, rule := range r.Properties["Rules"].([]any) {
			rule := rule.(map[string]any)
			if rule["Name"] == "BodyTooLarge" {
				size = &resource{Properties: rule}
			}
		}
		require.NotNil(t, size, "a body size rule")
		b, _ = json.Marshal(size.Properties)
		require.Contains(t, string(b), fmt.Sprintf(`"Size":%d`, config.DefaultMaxBodyBytes))
		require.Contains(t, string(b), `"OversizeHandling":"MATCH"`)
		require.Contains(t, string(b), fmt.Sprintf(`"RegexString":%q`, config.LayoutImportPath.String()))
	})
	require.Equal(t, 1, n)
	require.EqualValues(t, 65536, config.DefaultMaxBodyBytes, "the largest body the WAF can inspect on CloudFront")
	require.True(t, config.LayoutImportPath.MatchString("/api/venues/7/layouts"))
	require.True(t, config.LayoutImportPath.MatchString("/api/venues"))
	require.False(t, config.LayoutImportPath.MatchString("/api/venues/7/layouts/1"))
}

// envLen is the length of a template value once deployed, each reference
// counted as resolved characters.
func envLen(v any, resolved int) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case map[string]any:
		if parts, ok := v["Fn::Join"].([]any); ok {
			n := 0
			for _, p := range parts[1].([]any) {
				n += envLen(p, resolved)
			}
			return n
		}
	}
	return resolved
}
