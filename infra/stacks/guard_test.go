package stacks

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/testenv"
)

// guardExceptions are the reviewed AWS Control Tower findings: the rule,
// the logical ids it fires on (prefixes: CDK appends a hash) and why the
// deployment is right as it is. Anything else fails the test.
var guardExceptions = []struct{ rule, resource, why string }{
	{"cloudwatch_log_group_encrypted_check", "", "log groups are encrypted at rest by CloudWatch Logs; a customer key adds a key policy per group and cost, and nothing secret is logged"},
	{"lambda_inside_vpc_check", "", "every catraca function is in the VPC (the stack tests check VpcConfig), but its subnets and security group are imported from the network and data stacks, which the rule cannot follow; CDK's cross-region reference handlers call only SSM"},
	{"lambda_function_public_access_prohibited_check", "Pspwebhook", "the PSP's webhook URL is public by design: the PSP cannot sign for IAM, its HMAC signature is the authentication"},
	{"lambda_function_url_auth_check", "Pspwebhook", "same: the webhook's function URL has AuthType NONE and serves only the signed webhook route"},
	{"sqs_dlq_check", "PSPCallsDLQ", "a dead-letter queue itself"},
	{"sqs_dlq_check", "FailedInvocations", "a dead-letter queue itself"},
	{"cloudfront_custom_ssl_certificate_check", "Distribution", "the certificate comes from the us-east-1 stack through CDK's cross-region reference, which the rule cannot follow; the stack tests check the ACM certificate, TLSv1.2_2021 and sni-only"},
	{"cloudfront_sni_enabled_check", "Distribution", "same: sni-only is set, with the certificate imported from us-east-1"},
	{"cloudfront_origin_failover_enabled_check", "Distribution", "origin groups fail over only GET, HEAD and OPTIONS: there is one API and one site origin, and the API's writes could not fail over anyway"},
	{"s3_bucket_acl_prohibited_check", "Logs", "CloudFront standard logs are delivered through the bucket ACL"},
	{"s3_bucket_default_encryption_kms_check", "", "SSE-S3: the site is public content, and CloudFront log delivery and OAC reads would need key policies for SSE-KMS"},
	{"s3_bucket_logging_enabled_check", "Logs", "the access-log bucket itself"},
	{"s3_bucket_logging_enabled_check", "SearchSnapshots", "one object our functions write and read (the search snapshot); the access-log bucket is in the edge stack, which depends on the app stack"},
	{"s3_bucket_object_lock_enabled_check", "", "the site is overwritten on every deployment and the logs expire after 90 days: object lock would forbid both"},
	{"s3_bucket_versioning_enabled_check", "Logs", "access logs are written once and expire after 90 days"},
	{"s3_event_notifications_enabled_check", "", "nothing reacts to object changes in these buckets"},
	// Trial deployments only (make synth's defaults: production=false, no
	// domain); the test's production deployment with a domain has neither.
	{"rds_cluster_deletion_protection_enabled_check", "", "production=false must be destroyable; production turns deletion protection on"},
	{"cloudfront_security_policy_check", "Distribution", "without a domain CloudFront's default certificate fixes the policy at TLSv1; a domain gets TLSv1.2_2021"},
}

// cfnGuard is the binary the npm package @cdklabs/cdk-validator-cfnguard
// ships (make infra-tools installs it with the CDK CLI).
func cfnGuard(t *testing.T) (bin, rules string) {
	pkg := filepath.Join(testenv.RepoRoot(), "infra", "_cdkcli", "node_modules", "@cdklabs", "cdk-validator-cfnguard")
	osDir, arch := map[string]string{"linux": "ubuntu", "darwin": "macos"}[runtime.GOOS], map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]
	bin = filepath.Join(pkg, "bin", osDir, arch, "cfn-guard")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("cfn-guard is not installed (%v): run make infra-tools", err)
	}
	return bin, filepath.Join(pkg, "rules", "control-tower", "cfn-guard")
}

var resourcePath = regexp.MustCompile(`"path":\s*"/Resources/([^/"]+)`)

// controlTowerFindings runs cfn-guard with the Control Tower rules over the
// synthesized templates and returns "stack rule resource" per finding.
func controlTowerFindings(t *testing.T, outdir string) []string {
	bin, rules := cfnGuard(t)
	data := t.TempDir()
	templates, err := filepath.Glob(filepath.Join(outdir, "*.template.json"))
	require.NoError(t, err)
	require.NotEmpty(t, templates)
	for _, p := range templates {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(data, filepath.Base(p)), b, 0o644))
	}
	out, err := exec.Command(bin, "validate", "--rules", rules, "--data", data, "--output-format", "json", "--structured", "--show-summary", "none").Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("cfn-guard: %v", err)
	}
	var files []struct {
		Name         string `json:"name"`
		NotCompliant []struct {
			Rule struct {
				Name   string            `json:"name"`
				Checks []json.RawMessage `json:"checks"`
			} `json:"Rule"`
		} `json:"not_compliant"`
	}
	require.NoError(t, json.Unmarshal(out, &files), "cfn-guard output: %s", out)
	var found []string
	for _, f := range files {
		stack := strings.TrimSuffix(filepath.Base(f.Name), ".template.json")
		for _, nc := range f.NotCompliant {
			for _, c := range nc.Rule.Checks {
				if m := resourcePath.FindSubmatch(c); m != nil {
					found = append(found, stack+" "+nc.Rule.Name+" "+string(m[1]))
				}
			}
		}
	}
	slices.Sort(found)
	return slices.Compact(found)
}

func excepted(finding string) bool {
	parts := strings.Fields(finding)
	for _, e := range guardExceptions {
		if parts[1] == e.rule && strings.HasPrefix(parts[2], e.resource) {
			return true
		}
	}
	return false
}
