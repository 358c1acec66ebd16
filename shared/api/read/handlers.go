// Package read is the fans' read path: event listings and pages, seat
// maps, availability snapshots, the live stream of seat changes and a
// presale's public answer, all cacheable at the edge.
package read

import (
	"log/slog"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/availability"
	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/venue"
)

// Handlers serve the read routes.
type Handlers struct {
	Events       *event.Directory
	EventCache   *event.Cache
	Venues       *venue.Store
	Availability *availability.Service
	Live         *live.Hub
	ReadCache    *cache.Cache
	// Presale answers an event's public presale (commitment, seed, ids).
	Presale *presale.Service
	Log     *slog.Logger
	cached  web.Cached
}

// Mount registers the routes on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("GET /api/events", s.listEvents)
	m.Route("GET /api/events/{id}", s.getEvent)
	m.Route("GET /api/events/{id}/availability", s.getAvailability)
	m.Route("GET /api/events/{id}/stream", s.stream)
	m.Route("GET /api/venues/{id}/layouts/{version}", s.getLayout)
	m.Route("GET /api/events/{id}/presale", s.getPresale)
	m.Route("GET /api/events/{id}/presale/registrations", s.presaleIDs)
}
