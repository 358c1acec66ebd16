package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
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

// pathEvent returns the event named by the {id} path value.
func (s *Server) pathEvent(r *http.Request) (event.Event, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return event.Event{}, err
	}
	return s.publicEvent(r.Context(), id)
}

// publicEvent returns an event fans may see: a draft (an event whose
// creation has not finished) does not exist for them.
func (s *Server) publicEvent(ctx context.Context, id int64) (event.Event, error) {
	e, err := s.eventCache.Get(ctx, id)
	if err == nil && e.Status == event.Draft {
		return event.Event{}, event.ErrNotFound
	}
	return e, err
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

func compactLayout(l venue.Layout) layoutView {
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
func (s *Server) getLayout(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	version, err := strconv.ParseInt(r.PathValue("version"), 10, 32)
	if err != nil || version <= 0 || strconv.FormatInt(version, 10) != r.PathValue("version") {
		return problem.New(http.StatusNotFound, "layout-not-found", "No such venue layout.")
	}
	b, err := s.readCache.Get(r.Context(), fmt.Sprintf("layout:%d:%d", id, version), time.Hour, func(ctx context.Context) ([]byte, error) {
		l, err := s.venues.Load(ctx, id, int(version))
		if err != nil {
			return nil, err
		}
		return json.Marshal(compactLayout(l))
	})
	if err != nil {
		return err
	}
	s.writeCached(w, r, b, etagOf(fmt.Sprintf("l%d.%d", id, version)), cacheImmutable)
	return nil
}

// getAvailability serves GET /api/events/{id}/availability.
func (s *Server) getAvailability(w http.ResponseWriter, r *http.Request) error {
	e, err := s.pathEvent(r)
	if err != nil {
		return err
	}
	b, etag, err := s.availability.Get(r.Context(), e.ID, e.Shard)
	if err != nil {
		return err
	}
	s.writeCached(w, r, b, etag, cacheFor(e, cacheSnapshot))
	return nil
}

func etagOf(s string) string { return `"` + s + `"` }

// gzipMemo keeps the compressed form of recent payloads by ETag, so a
// snapshot is compressed once per interval, not once per request. It is
// emptied when it grows past gzipMemoSize (snapshots change every second).
// Each Server has its own: an ETag names a payload only within one server's
// data.
type gzipMemo struct {
	mu sync.Mutex
	m  map[string][]byte
}

const gzipMemoSize = 256

func (g *gzipMemo) gzipped(etag string, b []byte) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gz, ok := g.m[etag]; ok {
		return gz
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	if g.m == nil || len(g.m) >= gzipMemoSize {
		g.m = map[string][]byte{}
	}
	g.m[etag] = buf.Bytes()
	return buf.Bytes()
}

// writeCached sends a JSON payload with caching headers, answering
// If-None-Match with 304 and compressing for clients that accept gzip.
func (s *Server) writeCached(w http.ResponseWriter, r *http.Request, b []byte, etag, cacheControl string) {
	h := w.Header()
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", etag)
	h.Set("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		w.Write(s.gzip.gzipped(etag, b))
		return
	}
	w.Write(b)
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
func (s *Server) stream(w http.ResponseWriter, r *http.Request) error {
	flusher, ok := w.(http.Flusher)
	if !ok || !canFlush(w) {
		// A buffered Lambda would hold the stream for its whole timeout and
		// send nothing: refuse at once, and EventSource stops retrying.
		return problem.New(http.StatusNotImplemented, "no-streaming", "Streaming is not available here; poll the availability snapshot.")
	}
	e, err := s.pathEvent(r)
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
	ch, stop, err := s.live.Subscribe(r.Context(), id)
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
		missed, ok, err := s.live.Since(r.Context(), id, last)
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

// publishHold tells watchers what a hold took or a release gave back.
func (s *Server) publishHold(h inventory.Hold, state live.SeatState) {
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
	s.background(func(ctx context.Context) error { return s.live.Publish(ctx, h.EventID, d) })
}
