// Package door is entry day: the fan's tickets and transfers, the
// organizer's entry settings and door staff, and the staff's check-ins,
// sync and scan bundles.
package door

import (
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/entry"
)

// Handlers serve the entry routes.
type Handlers struct {
	Auth   *web.Auth
	Limits *web.Throttle
	Entry  *entry.Service
}
