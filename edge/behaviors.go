package edge

import (
	"strings"
	"time"
)

// Behavior is one CloudFront cache behavior. The CDK app builds the
// distribution from Behaviors and the local gateway routes by them, so the
// two cannot drift.
type Behavior struct {
	// PathPattern uses CloudFront syntax: * matches any characters, / included.
	PathPattern string
	// Origin is "api" (the API's function URL), "webhook" (the PSP webhook
	// function's URL; the API locally) or "site" (the S3 bucket).
	Origin string
	// Cached behaviors honour the origin's Cache-Control within MinTTL..MaxTTL
	// and key on path and query only; uncached ones forward everything.
	Cached         bool
	MinTTL, MaxTTL time.Duration
	DefaultTTL     time.Duration
}

// Behaviors in CloudFront precedence order; the last is the default.
var Behaviors = []Behavior{
	{PathPattern: "/api/events/*/availability", Origin: "api", Cached: true, MaxTTL: 2 * time.Second, DefaultTTL: time.Second},
	{PathPattern: "/api/events/*/queue/progress", Origin: "api", Cached: true, MaxTTL: 2 * time.Second, DefaultTTL: time.Second},
	{PathPattern: "/api/venues/*/layouts/*", Origin: "api", Cached: true, MaxTTL: 365 * 24 * time.Hour, DefaultTTL: 24 * time.Hour},
	{PathPattern: "/api/openapi.json", Origin: "api", Cached: true, MaxTTL: 24 * time.Hour, DefaultTTL: time.Hour},
	{PathPattern: "/api/psp/webhook", Origin: "webhook"},
	{PathPattern: "/api/*", Origin: "api"},
	{PathPattern: "/healthz", Origin: "api"},
	{PathPattern: "*", Origin: "site", Cached: true, MaxTTL: 365 * 24 * time.Hour, DefaultTTL: 24 * time.Hour},
}

// Match returns the behavior CloudFront would pick for a path.
func Match(path string) Behavior {
	for _, b := range Behaviors {
		if matchPattern(b.PathPattern, path) {
			return b
		}
	}
	return Behaviors[len(Behaviors)-1]
}

func matchPattern(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, p)
		}
		j := strings.Index(s, p)
		if j < 0 {
			return false
		}
		s = s[j+len(p):]
	}
	return s == ""
}

// SiteCacheControl is the Cache-Control a site file is uploaded with: the
// app shell revalidates so a deployment shows at once, the rest is cached.
func SiteCacheControl(name string) string {
	if name == "index.html" {
		return "no-cache"
	}
	return "public, max-age=86400"
}
