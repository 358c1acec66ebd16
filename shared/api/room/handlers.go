// Package room is the waiting room's HTTP face: joining, the place in
// line, leaving, progress, and the admission tokens that open the sale
// (TokenGate checks them on every hold).
package room

import (
	"log/slog"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
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
	Log        *slog.Logger
}

// Mount registers the routes on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("POST /api/events/{id}/queue", s.joinQueue)
	m.Route("GET /api/events/{id}/queue", s.queueStatus)
	m.Route("DELETE /api/events/{id}/queue", s.leaveQueue)
	m.Route("GET /api/events/{id}/queue/progress", s.queueProgress)
}
