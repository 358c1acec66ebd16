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

// What one venue layout may hold, whether imported as JSON or as a CSV seat
// list. The largest stadiums seat 100,000 to 132,000 and have a few
// hundred sections of at most about 100 rows of at most about 60 seats;
// the caps leave room above that and bound the work a 5 MB body can ask
// for (the import refuses a layout over any of them with a 400).
const (
	LayoutMaxSeats       = 150_000
	LayoutMaxSections    = 1_000
	LayoutMaxSectionRows = 500
	LayoutMaxRowSeats    = 500
)

// LayoutImportPath matches the paths layouts are imported on (POST
// /api/venues and /api/venues/{id}/layouts). The WAF uses the same pattern.
var LayoutImportPath = regexp.MustCompile(`^/api/venues(/[^/]+/layouts)?$`)
