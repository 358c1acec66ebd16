package stacks

// originShield is the Origin Shield region for an origin in each AWS
// region: the region itself where CloudFront offers Origin Shield, the
// nearest one that does otherwise. From "Choosing the AWS Region for
// Origin Shield" in the CloudFront Developer Guide,
// https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/origin-shield.html#choose-origin-shield-region
// (Origin Shield runs in the regions that host a regional edge cache;
// the guide's table maps the other regions to one of them). Checked entry
// by entry against the guide's source, doc_source/origin-shield.md in
// awsdocs/amazon-cloudfront-developer-guide (12 regions, 8 mappings).
// Regions added later (me-central-1, for one) are left out on purpose:
// an unknown region deploys without Origin Shield, which is safe.
var originShield = map[string]string{
	// Regions that offer Origin Shield.
	"us-east-1":      "us-east-1",
	"us-east-2":      "us-east-2",
	"us-west-2":      "us-west-2",
	"ap-south-1":     "ap-south-1",
	"ap-northeast-1": "ap-northeast-1",
	"ap-northeast-2": "ap-northeast-2",
	"ap-southeast-1": "ap-southeast-1",
	"ap-southeast-2": "ap-southeast-2",
	"eu-central-1":   "eu-central-1",
	"eu-west-1":      "eu-west-1",
	"eu-west-2":      "eu-west-2",
	"sa-east-1":      "sa-east-1",
	// Regions without it, and the guide's choice for their origins.
	"us-west-1":      "us-west-2",
	"ca-central-1":   "us-east-1",
	"af-south-1":     "eu-west-1",
	"ap-east-1":      "ap-southeast-1",
	"ap-northeast-3": "ap-northeast-1",
	"eu-south-1":     "eu-central-1",
	"eu-west-3":      "eu-west-2",
	"eu-north-1":     "eu-west-2",
	"me-south-1":     "ap-south-1",
}

// OriginShieldRegion is where to put Origin Shield for an origin in
// region; ok is false for a region the table does not know (a newer
// one): the distribution then goes without Origin Shield rather than
// fail to deploy, and make preflight says so.
func OriginShieldRegion(region string) (shield string, ok bool) {
	shield, ok = originShield[region]
	return shield, ok
}

// shieldFor is OriginShieldRegion, "" (no Origin Shield) when unknown.
func shieldFor(region string) string {
	shield, _ := OriginShieldRegion(region)
	return shield
}
