package read

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/venue"
)

// Cache-Control values of the read endpoints (see testdata/headers.golden).
const (
	cacheImmutable = "public, max-age=31536000, immutable"
	cacheSnapshot  = "public, max-age=1, stale-while-revalidate=2"
	cacheListing   = "public, max-age=5, stale-while-revalidate=30"
	cacheFinished  = "public, max-age=86400"
	cacheDocument  = "public, max-age=3600"
)

// cacheFor returns live, or a long cache once the event is over.
func cacheFor(e event.Event, live string) string {
	if time.Now().After(e.StartsAt.Add(12 * time.Hour)) {
		return cacheFinished
	}
	return live
}

// layoutView is the compact map a browser draws: seats as arrays
// [id, index, number, x, y] per row.
type layoutView struct {
	VenueID  int64         `json:"venue_id"`
	Version  int           `json:"version"`
	Name     string        `json:"name"`
	City     string        `json:"city"`
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	Stage    [][2]int      `json:"stage,omitempty"`
	Sections []sectionView `json:"sections"`
}

type sectionView struct {
	Code       string    `json:"code"`
	Name       string    `json:"name"`
	Kind       string    `json:"kind"`
	Rank       int       `json:"rank"`
	PriceLevel string    `json:"price_level"`
	Capacity   int       `json:"capacity,omitempty"`
	Shape      [][2]int  `json:"shape,omitempty"`
	Rows       []rowView `json:"rows,omitempty"`
}

type rowView struct {
	Label string       `json:"label"`
	Seats [][5]float64 `json:"seats"`
}

// CompactLayout is the map of l a browser draws.
func CompactLayout(l venue.Layout) layoutView {
	v := layoutView{VenueID: l.VenueID, Version: l.Version, Name: l.Name, City: l.City, Width: l.Width, Height: l.Height, Stage: l.Stage}
	for _, s := range l.Sections {
		sv := sectionView{Code: s.Code, Name: s.Name, Kind: s.Kind, Rank: s.Rank, PriceLevel: s.PriceLevel, Capacity: s.Capacity, Shape: s.Shape}
		for _, r := range s.Rows {
			rv := rowView{Label: r.Label}
			for _, st := range r.Seats {
				rv.Seats = append(rv.Seats, [5]float64{float64(st.ID), float64(st.Index), float64(st.Number), float64(st.X), float64(st.Y)})
			}
			sv.Rows = append(sv.Rows, rv)
		}
		v.Sections = append(v.Sections, sv)
	}
	return v
}

// getLayout serves GET /api/venues/{id}/layouts/{version}: immutable.
func (s *Handlers) getLayout(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r, "id")
	if err != nil {
		return err
	}
	version, err := strconv.ParseInt(r.PathValue("version"), 10, 32)
	if err != nil || version <= 0 || strconv.FormatInt(version, 10) != r.PathValue("version") {
		return problem.New(http.StatusNotFound, "layout-not-found", "No such venue layout.")
	}
	b, err := s.ReadCache.Get(r.Context(), fmt.Sprintf("layout:%d:%d", id, version), time.Hour, func(ctx context.Context) ([]byte, error) {
		l, err := s.Venues.Load(ctx, id, int(version))
		if err != nil {
			return nil, err
		}
		return json.Marshal(CompactLayout(l))
	})
	if err != nil {
		return err
	}
	s.cached.Write(w, r, b, web.ETag(fmt.Sprintf("l%d.%d", id, version)), cacheImmutable)
	return nil
}

// getAvailability serves GET /api/events/{id}/availability.
func (s *Handlers) getAvailability(w http.ResponseWriter, r *http.Request) error {
	e, err := web.PathEvent(r, s.EventCache)
	if err != nil {
		return err
	}
	b, etag, err := s.Availability.Get(r.Context(), e.ID, e.Shard)
	if err != nil {
		return err
	}
	s.cached.Write(w, r, b, etag, cacheFor(e, cacheSnapshot))
	return nil
}

// streamHeaders are the headers of an event stream.
func streamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
}

// maxStream bounds one SSE connection; the client reconnects with
// Last-Event-ID and misses nothing.
const maxStream = 5 * time.Minute

// stream serves GET /api/events/{id}/stream: Server-Sent Events of seat and
// GA changes, resumable with Last-Event-ID.
func (s *Handlers) stream(w http.ResponseWriter, r *http.Request) error {
	flusher, ok := w.(http.Flusher)
	if !ok || !web.CanFlush(w) {
		// A buffered Lambda would hold the stream for its whole timeout and
		// send nothing: refuse at once, and EventSource stops retrying.
		return problem.New(http.StatusNotImplemented, "no-streaming", "Streaming is not available here; poll the availability snapshot.")
	}
	e, err := web.PathEvent(r, s.EventCache)
	if err != nil {
		return err
	}
	if r.Method == http.MethodHead {
		// The headers are the answer: streaming on into a body HEAD does
		// not send would hold a subscription, and the connection, for
		// maxStream.
		streamHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		return nil
	}
	id := e.ID
	ch, stop, err := s.Live.Subscribe(r.Context(), id)
	if err != nil {
		p := problem.New(http.StatusServiceUnavailable, "stream-unavailable", "Live updates are unavailable; poll the availability snapshot.")
		p.RetryAfter = 5
		return p.Wrap(err)
	}
	defer stop()
	streamHeaders(w.Header())
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 3000\n\n")
	last := r.Header.Get("Last-Event-ID")
	if last != "" {
		missed, ok, err := s.Live.Since(r.Context(), id, last)
		if err != nil || !ok {
			fmt.Fprintf(w, "event: resync\ndata: {}\n\n") // too old: reload the snapshot
		}
		for _, m := range missed {
			fmt.Fprintf(w, "id: %s\nevent: change\ndata: %s\n\n", m.ID, m.Data)
			last = m.ID
		}
	}
	flusher.Flush()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	end := time.After(maxStream)
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-end:
			return nil
		case <-ping.C:
			fmt.Fprintf(w, ": ping\n\n")
		case m, ok := <-ch:
			if !ok {
				return nil // too slow: the browser resumes from last
			}
			if last != "" && !live.After(m.ID, last) {
				continue // already sent from the replay
			}
			fmt.Fprintf(w, "id: %s\nevent: change\ndata: %s\n\n", m.ID, m.Data)
			last = m.ID
		}
		flusher.Flush()
	}
}
