// Package console is the organizer's console: venues and layouts, events
// and their changes, the live control room, orders (search, detail,
// whole and partial refunds), the CSV exports, linked accounts (blocks,
// voids) and the opening and draw of verified-fan presales. Every route
// answers 403 to a fan and 404 to another organizer, as if the event or
// order did not exist.
package console

import (
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/controlroom"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/fairness"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/venue"
)

// Handlers serve the console routes.
type Handlers struct {
	// Auth also tells an organizer (Auth.OrganizerSession).
	Auth       *web.Auth
	Organizer  *organizer.Service
	Events     *event.Directory
	EventCache *event.Cache
	Venues     *venue.Store
	Orders     *order.Service
	Control    *controlroom.Service
	ReadCache  *cache.Cache
	// Fairness shows linked and flagged buyers and keeps the blocks and
	// their audit log (linked.go); Presale opens and draws presales.
	Fairness *fairness.Service
	Presale  *presale.Service
}

// Mount registers the routes on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("POST /api/venues", s.importLayout)
	m.Route("POST /api/venues/{id}/layouts", s.importLayout)
	m.Route("GET /api/venues", s.listVenues)
	m.Route("GET /api/venues/{id}/layouts", s.listLayouts)
	m.Route("GET /api/organizer/events", s.organizerEvents)
	m.Route("GET /api/organizer/events/{id}", s.organizerEvent)
	m.Route("PATCH /api/events/{id}", eventChange(s, s.updateEvent))
	m.Route("GET /api/events/{id}/refunds", s.eventRefunds)
	m.Route("POST /api/events", s.createEvent)
	m.Route("PUT /api/events/{id}/status", eventChange(s, s.changeEventStatus))
	m.Route("PUT /api/events/{id}/price-levels", eventChange(s, s.Organizer.SetPriceLevels))
	m.Route("PUT /api/events/{id}/waiting-room", eventChange(s, s.setWaitingRoom))
	m.Route("GET /api/events/{id}/control-room", s.controlRoom)
	m.Route("PUT /api/events/{id}/admission", eventChange(s, s.setAdmission))
	m.Route("GET /api/organizer/orders", s.searchOrders)
	m.Route("POST /api/organizer/orders", s.searchOrdersByBody)
	m.Route("GET /api/organizer/orders/{id}", s.organizerOrder)
	m.Route("POST /api/orders/{id}/refund", s.refundOrder)
	m.Route("GET /api/organizer/refund-failures", s.refundFailures)
	m.Route("GET /api/events/{id}/orders.csv", s.exportOrders)
	m.Route("GET /api/events/{id}/attendees.csv", s.exportAttendees)
	m.Route("GET /api/organizer/linked-accounts", s.linkedAccounts)
	m.Route("POST /api/organizer/linked-accounts/{id}/block", s.blockAccount)
	m.Route("POST /api/organizer/linked-accounts/{id}/unblock", s.unblockAccount)
	m.Route("POST /api/organizer/linked-orders/{id}/void", s.voidOrder)
	m.Route("PUT /api/events/{id}/presale", s.openPresale)
	m.Route("POST /api/events/{id}/presale/draw", s.drawPresale)
}
