// Package controlroom assembles an event's live control room for its
// organizer: the waiting room's counters and recent series from Redis and
// the sales summary from the event's shard. Its cost does not grow with
// the number of fans: a fixed number of Redis commands in three pipelines
// and one batch of aggregate queries (one round trip) on the shard's reader
// (shardstore.Store.Summary).
package controlroom

import (
	"context"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/shard"
	"github.com/catraca/catraca/shared/shardstore"
)

// Window is how far back the plots go.
const Window = 10 * time.Minute

// steps is the number of buckets plotted; rates are per minute, over the
// minute ending at each bucket, so reading starts a minute earlier.
var (
	steps    = int(Window / queue.SeriesStep)
	perMin   = int(time.Minute / queue.SeriesStep)
	readSpan = steps + perMin - 1
)

// Service builds control rooms.
type Service struct {
	room   *queue.Room
	shards *shardstore.Shards
}

// New returns the service.
func New(room *queue.Room, shards *shard.Router) *Service {
	return &Service{room: room, shards: shardstore.Open(shards)}
}

// View is the control room of one event at one moment.
type View struct {
	EventID int64        `json:"event_id"`
	Name    string       `json:"name"`
	Status  event.Status `json:"status"`
	// EventETag is the event's ETag as these figures saw it: the If-Match
	// of the room's admission changes.
	EventETag string    `json:"event_etag"`
	Currency  string    `json:"currency"`
	Now       time.Time `json:"now"`
	Queue     Queue     `json:"queue"`
	Series    Series    `json:"series"`
	Summary
}

// Queue is the waiting room now.
type Queue struct {
	Enabled           bool   `json:"enabled"`
	Paused            bool   `json:"paused"`
	Phase             string `json:"phase"`
	Waiting           int64  `json:"waiting"`
	Prequeue          int64  `json:"prequeue"`
	Active            int64  `json:"active"`
	CeilingConfigured int    `json:"ceiling_configured"`
	CeilingAdaptive   int64  `json:"ceiling_adaptive"`
	AdmittedTotal     int64  `json:"admitted_total"`
	AbandonedTotal    int64  `json:"abandoned_total"`
	// AdmittedLastMinute is the admission rate the ETA uses.
	AdmittedLastMinute int64 `json:"admitted_last_minute"`
	// ETASeconds is the line's estimated time to clear: waiting divided
	// by the admission rate (nil when nobody waits or nothing is admitted).
	ETASeconds *int64 `json:"eta_seconds"`
	SoldOut    bool   `json:"sold_out"`
}

// Series are the last Window's plots, one value per step, oldest first.
// Rates are per minute over the minute ending at each step; gauges are
// the last value sampled in the step (null when none was).
type Series struct {
	StepSeconds int       `json:"step_seconds"`
	Start       time.Time `json:"start"`
	Joins       []int64   `json:"joins_per_min"`
	Admissions  []int64   `json:"admissions_per_min"`
	Holds       []int64   `json:"holds_per_min"`
	Collisions  []int64   `json:"collisions_per_min"`
	HoldErrors  []int64   `json:"hold_errors_per_min"`
	HTTP5xx     []int64   `json:"http_5xx_per_min"`
	PSPErrors   []int64   `json:"psp_errors_per_min"`
	HoldP99     []int64   `json:"hold_p99_ms"`
	Waiting     []*int64  `json:"waiting"`
	Active      []*int64  `json:"active"`
	Ceiling     []*int64  `json:"ceiling"`
	Revenue     []*int64  `json:"revenue_cents"`
	Sold        []*int64  `json:"tickets_sold"`
	PSPQueued   []*int64  `json:"payments_queued"`
}

// Build reads the control room of e now.
func (s *Service) Build(ctx context.Context, e event.Event) (View, error) {
	v := View{EventID: e.ID, Name: e.Name, Status: e.Status, EventETag: e.ETag(), Currency: e.Currency, Now: time.Now().UTC()}
	st, err := s.shards.Reader(e.Shard)
	if err != nil {
		return View{}, err
	}
	sum, err := st.Summary(ctx, e.ID)
	if err != nil {
		return View{}, err
	}
	v.Summary = summaryOf(sum)
	p, err := s.room.Progress(ctx, e.ID)
	if err != nil {
		return View{}, err
	}
	v.Queue = Queue{Enabled: e.WaitingRoom.Enabled, Paused: e.WaitingRoom.Paused, Phase: p.Phase, Waiting: p.Waiting,
		Prequeue: p.Prequeue, Active: p.Active, CeilingConfigured: e.WaitingRoom.Ceiling, CeilingAdaptive: p.Ceiling,
		AdmittedTotal: p.Admitted, AbandonedTotal: p.Abandoned, AdmittedLastMinute: p.RatePerMin, SoldOut: p.SoldOut}
	if p.Waiting > 0 && p.RatePerMin > 0 {
		eta := int64(p.ETA(p.Waiting).Seconds())
		v.Queue.ETASeconds = &eta
	}
	// The sales totals join the series, so their plots have a history.
	if err := s.room.SetGauges(ctx, e.ID, map[string]int64{"revenue": v.Sales.RevenueCents, "sold": v.Sales.TicketsSold,
		"psp_queued": v.Payments.Queued}); err != nil {
		return View{}, err
	}
	buckets, err := s.room.Series(ctx, e.ID, readSpan)
	if err != nil {
		return View{}, err
	}
	v.Series = series(buckets)
	return v, nil
}

// series turns raw buckets (readSpan of them) into the plotted steps.
func series(b []queue.Bucket) Series {
	out := Series{StepSeconds: int(queue.SeriesStep / time.Second), Start: b[perMin-1].At}
	rate := func(f func(queue.Bucket) int64) []int64 {
		r := make([]int64, steps)
		for i := range steps {
			for _, x := range b[i : i+perMin] {
				r[i] += f(x)
			}
		}
		return r
	}
	out.Joins = rate(func(x queue.Bucket) int64 { return x.Joins })
	out.Admissions = rate(func(x queue.Bucket) int64 { return x.Admitted })
	out.Holds = rate(func(x queue.Bucket) int64 { return x.Holds })
	out.Collisions = rate(func(x queue.Bucket) int64 { return x.Taken })
	out.HoldErrors = rate(func(x queue.Bucket) int64 { return x.Failed })
	out.HTTP5xx = rate(func(x queue.Bucket) int64 { return x.HTTP5xx })
	out.PSPErrors = rate(func(x queue.Bucket) int64 { return x.PSPErrors })
	out.HoldP99 = make([]int64, steps)
	for i := range steps {
		hist := make([]int64, len(queue.LatencyBounds)+1)
		for _, x := range b[i : i+perMin] {
			for j, c := range x.Latency {
				hist[j] += c
			}
		}
		out.HoldP99[i] = queue.Percentile(hist, 0.99).Milliseconds()
	}
	gauge := func(f func(queue.Bucket) (int64, bool)) []*int64 {
		g := make([]*int64, steps)
		for i, x := range b[perMin-1:] {
			if n, ok := f(x); ok {
				g[i] = &n
			}
		}
		return g
	}
	tick := func(f func(queue.Bucket) int64) []*int64 {
		return gauge(func(x queue.Bucket) (int64, bool) { return f(x), x.Sampled })
	}
	out.Waiting = tick(func(x queue.Bucket) int64 { return x.Waiting + x.Prequeue })
	out.Active = tick(func(x queue.Bucket) int64 { return x.Active })
	out.Ceiling = tick(func(x queue.Bucket) int64 { return x.Ceiling })
	sampled := func(name string) []*int64 {
		return gauge(func(x queue.Bucket) (int64, bool) { n, ok := x.Gauges[name]; return n, ok })
	}
	out.Revenue, out.Sold, out.PSPQueued = sampled("revenue"), sampled("sold"), sampled("psp_queued")
	return out
}
