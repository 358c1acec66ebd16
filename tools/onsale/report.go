package onsale

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/app"
)

// Report is what a run measured.
type Report struct {
	Options        Options                `json:"options"`
	Event          int64                  `json:"event"`
	Tickets        int64                  `json:"tickets"`
	Sold           int64                  `json:"sold"`
	JoinSeconds    float64                `json:"join_seconds"`
	DrawAt         float64                `json:"draw_at_seconds"`
	AdmitAt        float64                `json:"admission_start_seconds"`
	LearnSeconds   float64                `json:"learn_seconds"` // draw to the last fan's first status read
	CommitP50      float64                `json:"commit_p50_ms"` // one commit on the shard, one client
	CommitP99      float64                `json:"commit_p99_ms"`
	SellOutSeconds float64                `json:"sell_out_seconds"`
	Sold95Seconds  float64                `json:"sold_95_seconds"`
	TheoreticalMin float64                `json:"theoretical_min_seconds"`
	ShopSeconds    float64                `json:"mean_shop_seconds"`
	Collisions     int64                  `json:"collisions"`
	Abandoned      int64                  `json:"abandoned"`
	Errors         int64                  `json:"errors"`
	ErrorKinds     map[string]int64       `json:"error_kinds,omitempty"`
	OriginPerFan   float64                `json:"origin_requests_per_waiting_fan_per_minute"`
	MaxActive      int64                  `json:"max_active"`
	Latency        map[string]Percentiles `json:"latency_ms"`
	Samples        []Sample               `json:"samples"`
	ChaosEvents    []string               `json:"chaos_events"`
	Violations     []string               `json:"violations"`
	Farm           *FarmResult            `json:"farm,omitempty"`
	mu             sync.Mutex
	shops          []shopTime
}

// shopTime is when an admitted fan started shopping (seconds into the run)
// and for how long it held its slot.
type shopTime struct{ start, seconds float64 }

// Percentiles of one route, in milliseconds.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

func (r *Report) addCollision() { r.mu.Lock(); r.Collisions++; r.mu.Unlock() }
func (r *Report) addAbandon()   { r.mu.Lock(); r.Abandoned++; r.mu.Unlock() }
func (r *Report) chaos(what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ChaosEvents = append(r.ChaosEvents, time.Now().UTC().Format(time.TimeOnly)+" "+what)
}

type latencies struct {
	mu sync.Mutex
	by map[string][]time.Duration
}

func newLatencies() *latencies { return &latencies{by: map[string][]time.Duration{}} }

func (l *latencies) add(route string, d time.Duration) {
	l.mu.Lock()
	l.by[route] = append(l.by[route], d)
	l.mu.Unlock()
}

func (l *latencies) percentiles() map[string]Percentiles {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]Percentiles{}
	for route, ds := range l.by {
		s := slices.Clone(ds)
		slices.Sort(s)
		at := func(q float64) float64 { return ms(s[int(q*float64(len(s)-1))]) }
		out[route] = Percentiles{N: len(s), P50: at(0.5), P95: at(0.95), P99: at(0.99)}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// DrawToSoldOut is the headline, what a fan feels: from the draw (when
// every fan can learn its place) until nothing is left to hold.
func (rep *Report) DrawToSoldOut() float64 { return rep.AdmitAt - rep.DrawAt + rep.SellOutSeconds }

// Commits names the run's commit mode and the latency it gave.
func (rep *Report) Commits() string {
	mode := "local"
	if rep.Options.CommitDelay > 0 {
		mode = fmt.Sprintf("Aurora-like (commit_delay %d µs)", rep.Options.CommitDelay)
	}
	return fmt.Sprintf("%s, one commit p50 %.2f ms, p99 %.2f ms", mode, rep.CommitP50, rep.CommitP99)
}

// sample records the sale once a second until stopped.
func (r *run) sample(ctx context.Context, start time.Time) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.Every(ctx, time.Second, func(ctx context.Context) {
			p, err := r.st.App.Room.Progress(ctx, r.event)
			s := Sample{T: time.Since(start).Seconds(), Sold: r.sold.Load(), Errors: r.errs.Load()}
			if err == nil {
				s.Waiting, s.Active, s.Ceiling, s.Admitted = p.Waiting+p.Prequeue, p.Active, p.Ceiling, p.Admitted
			}
			r.rep.mu.Lock()
			r.rep.Samples = append(r.rep.Samples, s)
			r.rep.mu.Unlock()
			if r.o.Progress != nil {
				r.o.Progress(s)
			}
		})
	}()
	return func() { cancel(); <-done }
}

func (rep *Report) finish(r *run) {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	rep.Sold = r.sold.Load()
	rep.Errors = r.errs.Load()
	r.errMu.Lock()
	rep.ErrorKinds = maps.Clone(r.kinds)
	r.errMu.Unlock()
	rep.Latency = r.lat.percentiles()
	// Waiting fan-minutes: the area under the waiting curve.
	var fanMinutes float64
	for _, s := range rep.Samples {
		if rep.Sold95Seconds == 0 && float64(s.Sold) >= 0.95*float64(rep.Tickets) {
			rep.Sold95Seconds = s.T - rep.AdmitAt
		}
		fanMinutes += float64(s.Waiting) / 60
		rep.MaxActive = max(rep.MaxActive, s.Active)
	}
	if fanMinutes > 0 {
		rep.OriginPerFan = float64(r.origin.Load()) / fanMinutes
	}
	// The fastest possible sale keeps the ceiling full. By Little's law
	// fans pass through at ceiling ÷ the mean time one holds a slot; the
	// fans admitted by sell-out took every ticket, so the minimum is that
	// many fans × the mean slot time ÷ the ceiling. Only shoppers who began
	// before sell-out count (later ones just learn it is sold out).
	soldOutAt := rep.AdmitAt + rep.SellOutSeconds
	var total float64
	var n int
	for _, s := range rep.shops {
		if s.start <= soldOutAt {
			total += s.seconds
			n++
		}
	}
	if admitted := admittedBy(rep.Samples, soldOutAt); admitted > 0 && n > 0 {
		rep.ShopSeconds = total / float64(n)
		rep.TheoreticalMin = float64(admitted) * rep.ShopSeconds / float64(r.o.Ceiling)
	}
}

// admittedBy is how many fans had been admitted at second t of the run.
func admittedBy(samples []Sample, t float64) int64 {
	var n int64
	for _, s := range samples {
		if s.T > t {
			break
		}
		n = s.Admitted
	}
	return n
}

// Markdown renders the report for people.
func (rep *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# On-sale simulation\n\n")
	fmt.Fprintf(&b, "%d fans, %d tickets (%d reserved seats at least + %d standing), ceiling %d, chaos: %s, commits: %s.\n\n",
		rep.Options.Fans, rep.Tickets, rep.Options.Seats, rep.Options.GA, rep.Options.Ceiling, or(rep.Options.Chaos, "none"), rep.Commits())
	fmt.Fprintf(&b, "| figure | value |\n|---|---|\n")
	fmt.Fprintf(&b, "| tickets sold | %d of %d |\n", rep.Sold, rep.Tickets)
	fmt.Fprintf(&b, "| pre-queue joins took | %.1f s |\n", rep.JoinSeconds)
	fmt.Fprintf(&b, "| **draw to sold out (what a fan feels)** | **%.1f s**%s |\n", rep.DrawToSoldOut(), rep.vsMin(rep.DrawToSoldOut()))
	fmt.Fprintf(&b, "| draw to admission start | %.1f s |\n", rep.AdmitAt-rep.DrawAt)
	fmt.Fprintf(&b, "| draw to the last fan knowing its place (one status read each, while admission runs) | %.1f s |\n", rep.LearnSeconds)
	fmt.Fprintf(&b, "| admission start to sold out (nothing left to hold) | %.1f s%s |\n", rep.SellOutSeconds, rep.vsMin(rep.SellOutSeconds))
	if rep.Sold95Seconds > 0 {
		fmt.Fprintf(&b, "| admission start to 95 %% of tickets paid | %.1f s |\n", rep.Sold95Seconds)
	}
	if rep.TheoreticalMin > 0 {
		fmt.Fprintf(&b, "| mean time a shopper holds a slot | %.1f s |\n", rep.ShopSeconds)
		fmt.Fprintf(&b, "| theoretical minimum (ceiling full, Little's law) | %.1f s |\n", rep.TheoreticalMin)
	}
	fmt.Fprintf(&b, "| seat collisions (409, map resynced) | %d |\n", rep.Collisions)
	fmt.Fprintf(&b, "| holds abandoned | %d |\n", rep.Abandoned)
	fmt.Fprintf(&b, "| max shoppers at once | %d (ceiling %d) |\n", rep.MaxActive, rep.Options.Ceiling)
	fmt.Fprintf(&b, "| origin queue requests per waiting fan per minute | %.2f |\n", rep.OriginPerFan)
	fmt.Fprintf(&b, "| transport errors and 5xx | %d%s |\n", rep.Errors, kinds(rep.ErrorKinds))
	fmt.Fprintf(&b, "| invariant violations | %d |\n\n", len(rep.Violations))
	for _, v := range rep.Violations {
		fmt.Fprintf(&b, "- VIOLATION: %s\n", v)
	}
	if rep.Farm != nil {
		fmt.Fprintf(&b, "## Scalper farm\n\n%s\n", rep.Farm.Markdown(rep.Tickets))
	}
	fmt.Fprintf(&b, "## Latency per endpoint (ms)\n\n| endpoint | n | p50 | p95 | p99 |\n|---|---|---|---|---|\n")
	routes := make([]string, 0, len(rep.Latency))
	for k := range rep.Latency {
		routes = append(routes, k)
	}
	sort.Strings(routes)
	for _, k := range routes {
		p := rep.Latency[k]
		fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.1f |\n", k, p.N, p.P50, p.P95, p.P99)
	}
	if len(rep.ChaosEvents) > 0 {
		fmt.Fprintf(&b, "\n## Chaos\n\n")
		for _, e := range rep.ChaosEvents {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	fmt.Fprintf(&b, "\n![queue, shoppers and tickets sold over time](onsale.svg)\n")
	return b.String()
}

// vsMin is " (n× the theoretical minimum)", or "" when there is none.
func (rep *Report) vsMin(seconds float64) string {
	if rep.TheoreticalMin <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f× the minimum)", seconds/rep.TheoreticalMin)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SVG plots queue length, active shoppers and tickets sold over time.
func (rep *Report) SVG() string {
	const w, h, pad = 720.0, 300.0, 40.0
	var tMax, yMax float64 = 1, 1
	for _, s := range rep.Samples {
		tMax = max(tMax, s.T)
		yMax = max(yMax, float64(s.Waiting), float64(s.Sold), float64(s.Active))
	}
	line := func(color string, y func(Sample) float64) string {
		var pts []string
		for _, s := range rep.Samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", pad+s.T/tMax*(w-2*pad), h-pad-y(s)/yMax*(h-2*pad)))
		}
		return fmt.Sprintf(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, color, strings.Join(pts, " "))
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="white"/>
<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/><line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#999"/>
<text x="%.0f" y="%.0f">%.0f s</text><text x="4" y="%.0f">%.0f</text>
%s%s%s
<text x="60" y="20" fill="#0b5cd5">queue (waiting)</text><text x="200" y="20" fill="#bc4c00">shoppers ×10</text><text x="330" y="20" fill="#116329">tickets sold</text>
</svg>`, w, h, pad, h-pad, w-pad, h-pad, pad, pad, pad, h-pad, w-pad-30, h-pad+16, tMax, pad, yMax,
		line("#0b5cd5", func(s Sample) float64 { return float64(s.Waiting) }),
		line("#bc4c00", func(s Sample) float64 { return float64(s.Active * 10) }),
		line("#116329", func(s Sample) float64 { return float64(s.Sold) }))
}

// kinds lists error kinds as " (route status ×n, …)", most frequent first.
func kinds(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	names := slices.Collect(maps.Keys(m))
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), strings.Compare(a, b)) })
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s ×%d", n, m[n])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
