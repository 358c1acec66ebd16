package config

import "regexp"

// Request body limits. The WAF in front of CloudFront (infra/stacks)
// refuses larger bodies with the same numbers, so what passes the edge is
// what the app accepts.
const (
	DefaultMaxBodyBytes = 64 << 10
	// LayoutMaxBodyBytes fits a 100,000-seat layout (a 20,000-seat one is
	// about 750 KB) under the 6 MB a buffered Lambda accepts.
	LayoutMaxBodyBytes = 5 << 20
)

// LayoutImportPath matches the paths layouts are imported on (POST
// /api/venues and /api/venues/{id}/layouts). The WAF uses the same pattern.
var LayoutImportPath = regexp.MustCompile(`^/api/venues(/[^/]+/layouts)?$`)
