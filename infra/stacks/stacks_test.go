package stacks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/testenv"
)

type resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
}

// synth builds a deployment (functions from placeholder bootstraps: the
// binaries themselves are tested under the Lambda emulator) and returns
// every stack's resources by logical id.
func synth(t *testing.T) map[string]map[string]resource {
	t.Helper()
	dist := t.TempDir()
	for _, fn := range Functions {
		require.NoError(t, os.MkdirAll(filepath.Join(dist, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dist, fn, "bootstrap"), []byte("placeholder"), 0o755))
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	d := Build(app, Config{Name: "test", Shards: 2, Production: true, Dist: dist,
		Migrations: filepath.Join(testenv.RepoRoot(), "shared", "migrate"), PublicURL: "https://tickets.example.com",
		PSPURL: "https://psp.example.com", PSPRate: 90, PSPConcurrency: 5})
	out := map[string]map[string]resource{}
	for _, st := range []awscdk.Stack{d.Network.Stack, d.Data.Stack, d.Async.Stack, d.App.Stack, d.Edge.Stack, d.Ops} {
		raw, err := json.Marshal(assertions.Template_FromStack(st, nil).ToJSON())
		require.NoError(t, err)
		var tpl struct {
			Resources map[string]resource `json:"Resources"`
		}
		require.NoError(t, json.Unmarshal(raw, &tpl))
		out[*st.StackName()] = tpl.Resources
	}
	return out
}

func each(all map[string]map[string]resource, typ string, fn func(stack, id string, r resource)) int {
	n := 0
	for stack, rs := range all {
		for id, r := range rs {
			if r.Type == typ {
				fn(stack, id, r)
				n++
			}
		}
	}
	return n
}

func TestTemplates(t *testing.T) {
	all := synth(t)

	t.Run("every function is provided.al2023 on arm64", func(t *testing.T) {
		n := each(all, "AWS::Lambda::Function", func(_, id string, r resource) {
			require.Equal(t, "provided.al2023", r.Properties["Runtime"], id)
			require.Equal(t, []any{"arm64"}, r.Properties["Architectures"], id)
			require.NotNil(t, r.Properties["VpcConfig"], "%s runs in the VPC", id)
		})
		require.Equal(t, len(Functions), n, "no helper functions in other runtimes")
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
		require.Equal(t, 3, each(all, "AWS::RDS::DBCluster", func(string, string, resource) {}), "catalog + 2 shards")
		require.Equal(t, 3, each(all, "AWS::RDS::DBProxy", func(_, id string, r resource) {
			require.Equal(t, true, r.Properties["RequireTLS"], id)
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
			for id := range all["test-async"] {
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
		each(all, "AWS::Lambda::Url", func(_, id string, r resource) {
			require.Equal(t, "AWS_IAM", r.Properties["AuthType"], id)
		})
		require.Equal(t, 1, each(all, "AWS::CloudFront::Distribution", func(_, _ string, r resource) {
			c := r.Properties["DistributionConfig"].(map[string]any)
			require.NotNil(t, c["WebACLId"], "WAF attached")
			require.NotNil(t, c["Logging"], "access logs")
			require.Len(t, c["CacheBehaviors"], 5)
		}))
		each(all, "AWS::WAFv2::WebACL", func(_, _ string, r resource) {
			b, _ := json.Marshal(r.Properties["Rules"])
			for _, want := range []string{"RateBasedStatement", "AWSManagedRulesBotControlRuleSet", "AWSManagedRulesCommonRuleSet"} {
				require.Contains(t, string(b), want)
			}
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
			vars := r.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			require.NotNil(t, vars["CATRACA_EDGE_KVS_ARN"], id)
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
		require.GreaterOrEqual(t, each(all, "AWS::CloudWatch::Alarm", func(string, string, resource) {}), 5)
		require.Equal(t, 1, each(all, "AWS::CloudWatch::Dashboard", func(string, string, resource) {}))
		require.Equal(t, 3, each(all, "Custom::CatracaMigration", func(string, string, resource) {}))
		each(all, "AWS::Lambda::Function", func(_, id string, r resource) {
			if strings.HasPrefix(id, "Pspqueue") {
				require.EqualValues(t, 5, r.Properties["ReservedConcurrentExecutions"])
			}
		})
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
