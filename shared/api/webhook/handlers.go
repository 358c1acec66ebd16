// Package webhook receives the payment provider's signed events.
package webhook

import (
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/psp"
)

// Handlers serve the provider's webhook.
type Handlers struct {
	Orders *order.Service
	// Webhooks verify signatures (several secrets during rotation).
	Webhooks *psp.Webhooks
}

// Mount registers the route on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("POST /api/psp/webhook", s.pspWebhook)
}
