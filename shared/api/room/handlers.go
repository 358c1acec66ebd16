// Package room is the waiting room's HTTP face: joining, the place in
// line, leaving, progress, the admission tokens that open the sale
// (TokenGate checks them on every hold), the challenge a risky join must
// pass (Door), and a fan's side of a verified-fan presale.
package room

import (
	"log/slog"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
)

// Handlers serve the waiting-room routes.
type Handlers struct {
	Auth       *web.Auth
	Room       *queue.Room
	Admissions *token.Signer
	// Tickets sign the fan's place in line (queue tickets).
	Tickets    *token.Signer
	EventCache *event.Cache
	// Door challenges risky joins (nil: none); Presale registers fans for
	// a verified-fan presale and redeems their codes.
	Door    *Door
	Presale *presale.Service
	Log     *slog.Logger
}

// Mount registers the routes on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("POST /api/events/{id}/queue", s.joinQueue)
	m.Route("GET /api/events/{id}/queue", s.queueStatus)
	m.Route("DELETE /api/events/{id}/queue", s.leaveQueue)
	m.Route("GET /api/events/{id}/queue/progress", s.queueProgress)
	m.Route("GET /api/events/{id}/presale/registration", s.myPresale)
	m.Route("POST /api/events/{id}/presale/registration", s.registerPresale)
	m.Route("POST /api/events/{id}/presale/code", s.redeemPresale)
}
