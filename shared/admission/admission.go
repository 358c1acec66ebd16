// Package admission runs the waiting room's admission controller: about once
// a second, for every event whose waiting room is live, it publishes the
// event's settings to Redis, checks what is left to sell, and runs one
// admission tick. It is the only waiting-room code that reads the database.
package admission

import (
	"context"
	"log/slog"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/metrics"
	"github.com/catraca/catraca/shared/queue"
)

// Controller ticks every live waiting room.
type Controller struct {
	Room      *queue.Room
	Events    *event.Directory
	Inventory *inventory.Service
	Log       *slog.Logger
	// Interval between ticks (a fraction of a second).
	Interval time.Duration
	// Abandon is how long a fan may go without a heartbeat.
	Abandon time.Duration
	// AdmitDelay starts admission this long after the draw, so a large
	// room learns its places (one read per fan) before the sale's load.
	AdmitDelay time.Duration
	// Owner names this controller for the per-event lease.
	Owner string
}

// Run ticks until ctx ends or until passes (the admit Lambda runs for about
// a minute per scheduled invocation).
func (c *Controller) Run(ctx context.Context, until time.Time) {
	var events []event.Event
	var refreshed time.Time
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		now := time.Now()
		if !until.IsZero() && now.After(until) {
			return
		}
		// Re-read the catalog every second: an organizer's change (a
		// lowered ceiling, the room switched off) reaches Redis within it.
		if now.Sub(refreshed) >= time.Second {
			if list, err := c.Events.WaitingRoomEvents(ctx, now); err != nil {
				c.Log.Error("admission: list events", "err", err)
			} else {
				events, refreshed = list, now
			}
		}
		for i := range events {
			e := &events[i]
			if mine, err := c.Room.Lease(ctx, e.ID, c.Owner, 3*c.Interval); err != nil || !mine {
				continue // another controller ticks this event (or Redis is down)
			}
			if _, err := c.tick(ctx, e); err != nil {
				// Fail closed: nobody new is admitted this tick; admitted
				// fans keep buying with their stateless tokens.
				c.Log.Warn("admission: tick failed", "event", e.ID, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick runs one admission step for one event.
func (c *Controller) Tick(ctx context.Context, e event.Event) (queue.TickResult, error) {
	return c.tick(ctx, &e)
}

// tick is Tick recording on e the room's first publication once it is
// stored, so that Run's next tick of e neither marks it again nor, after a
// tick that failed before storing it, takes the fresh room for one that
// Redis lost.
func (c *Controller) tick(ctx context.Context, e *event.Event) (queue.TickResult, error) {
	settings := queue.SettingsOf(*e, c.Abandon)
	settings.AdmitFrom = settings.DrawAt.Add(c.AdmitDelay)
	fresh, err := c.Room.Publish(ctx, e.ID, settings)
	if err != nil {
		return queue.TickResult{}, err
	}
	if fresh && e.WaitingRoom.PublishedAt != nil && time.Now().After(e.SaleStartsAt.Add(5*time.Second)) {
		// Published before, gone now: Redis lost it.
		c.Log.Warn("admission: waiting-room state lost, recovering at a conservative rate", "event", e.ID)
		if err := c.Room.Recover(ctx, e.ID, time.Duration(e.WaitingRoom.ActiveTTL)*time.Second); err != nil {
			return queue.TickResult{}, err
		}
	}
	if e.WaitingRoom.PublishedAt == nil {
		if err := c.Events.MarkRoomPublished(ctx, e.ID); err != nil {
			return queue.TickResult{}, err
		}
		now := time.Now()
		e.WaitingRoom.PublishedAt = &now
	}
	in := queue.TickInput{Interval: c.Interval}
	available, held, err := c.Inventory.Availability(ctx, *e)
	if err != nil {
		// Unknown inventory: admit nobody rather than guess.
		in.Paused = true
		c.Log.Warn("admission: availability unknown", "event", e.ID, "err", err)
	}
	in.SoldOut = err == nil && available == 0 && held == 0
	// An organizer's pause, or nothing available now while holds may still
	// come back: nobody new is admitted; places and turns are kept.
	in.Paused = in.Paused || e.WaitingRoom.Paused || (available == 0 && held > 0)
	res, err := c.Room.Tick(ctx, e.ID, in)
	if err == nil && (res.Admitted > 0 || res.Waiting > 0) {
		c.Log.LogAttrs(ctx, slog.LevelInfo, "admission", append([]slog.Attr{
			slog.Int64("event", e.ID), slog.Int64("admitted", int64(res.Admitted)), slog.Int64("active", int64(res.Active)),
			slog.Int64("waiting", int64(res.Waiting)), slog.Int64("ceiling", int64(res.Ceiling))},
			metrics.Attrs(map[string]float64{metrics.Admitted: float64(res.Admitted), metrics.QueueWaiting: float64(res.Waiting)})...)...)
	}
	return res, err
}
