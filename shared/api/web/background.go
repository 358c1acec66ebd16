package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/event"
)

// Background runs best-effort bookkeeping off the request path.
func Background(log *slog.Logger, fn func(context.Context) error) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := fn(ctx); err != nil {
			log.Warn("background bookkeeping failed", "err", err)
		}
	}()
}

// PublicEvent returns an event fans may see: a draft (an event whose
// creation has not finished) does not exist for them.
func PublicEvent(ctx context.Context, events *event.Cache, id int64) (event.Event, error) {
	e, err := events.Get(ctx, id)
	if err == nil && e.Status == event.Draft {
		return event.Event{}, event.ErrNotFound
	}
	return e, err
}

// PathEvent returns the public event named by the {id} path value.
func PathEvent(r *http.Request, events *event.Cache) (event.Event, error) {
	id, err := PathID(r, "id")
	if err != nil {
		return event.Event{}, err
	}
	return PublicEvent(r.Context(), events, id)
}
