// Package sale is the fan's purchase: holding seats, releasing them,
// checking out and reading orders.
package sale

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/venue"
)

// Gate decides whether an account may hold for an event right now. The
// waiting room plugs in here.
type Gate interface {
	Allow(r *http.Request, e event.Event, account int64) error
}

// Handlers serve the sale routes.
type Handlers struct {
	Auth *web.Auth
	// Gate guards the holds of waiting-room events (room.TokenGate).
	Gate      Gate
	Inventory *inventory.Service
	// Seats tells a seat of another venue from one that does not exist.
	Seats      *venue.Store
	EventCache *event.Cache
	Orders     *order.Service
	// Room takes every hold's latency and outcome (the adaptive ceiling).
	Room *queue.Room
	Live *live.Hub
	Log  *slog.Logger
}

// Mount registers the routes on m.
func (s *Handlers) Mount(m *web.Mux) {
	m.Route("POST /api/events/{id}/holds", s.createHold)
	m.Route("GET /api/holds/{id}", s.getHold)
	m.Route("DELETE /api/holds/{id}", s.releaseHold)
	m.Route("POST /api/orders/{id}/checkout", s.checkout)
	m.Route("GET /api/orders/{id}", s.getOrder)
	m.Route("GET /api/me/orders", s.myOrders)
}

// publishHold tells watchers what a hold took or a release gave back.
func (s *Handlers) publishHold(h inventory.Hold, state live.SeatState) {
	d := live.Delta{State: state, GA: map[string]int{}}
	sign := -1
	if state == live.SeatAvailable {
		sign = 1
	}
	for _, it := range h.Items {
		if it.SeatIndex != nil {
			d.Seats = append(d.Seats, *it.SeatIndex)
		} else if it.Pool != "" {
			d.GA[it.Pool] += sign * it.Quantity
		}
	}
	web.Background(s.Log, func(ctx context.Context) error { return s.Live.Publish(ctx, h.EventID, d) })
}
