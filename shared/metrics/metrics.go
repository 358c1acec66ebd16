// Package metrics puts CloudWatch metrics into log lines the functions
// write anyway, in Embedded Metric Format: CloudWatch extracts them from
// the logs, so a hot path pays no API call and no extra line. A request
// collects its metrics in its context; the request log line carries them.
package metrics

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of every catraca metric.
const Namespace = "Catraca"

// Names of the metrics the dashboard and alarms use.
const (
	Holds         = "Holds"
	HoldConflicts = "HoldConflicts"
	Admitted      = "Admitted"
	QueueWaiting  = "QueueWaiting"
	PSPErrors     = "PSPErrors"
	HTTP5xx       = "HTTP5xx"
	// PaymentMismatches counts charges refunded because they do not match
	// an order: unknown reference, wrong amount or currency.
	PaymentMismatches = "PaymentMismatches"
	// ChargesRefunded counts matching charges refunded because the order
	// could not take them (hold lost, limit, sales closed, duplicate).
	ChargesRefunded = "ChargesRefunded"
	// OutboxDead counts outbox messages (ticket mails, payment cancels)
	// set aside after failing every try.
	OutboxDead = "OutboxDead"
	// RefundsFailed counts refunds the PSP refused, or never answered
	// after the outbox's tries: money still owed, set aside for an
	// organizer (GET /api/organizer/refund-failures).
	RefundsFailed = "RefundsFailed"
)

// Set collects one request's metrics.
type Set struct {
	mu   sync.Mutex
	vals map[string]float64
}

type key struct{}

// With returns a context that collects metrics into a new set.
func With(ctx context.Context) (context.Context, *Set) {
	return new(Scope).Start(ctx)
}

// Scope is a context that collects metrics into its own set. A request's
// middleware that allocates its state anyway embeds one there (Start) and
// saves With's allocation: every request, the waiting room's too, has one.
type Scope struct {
	context.Context
	set Set // most requests add nothing: the map comes with the first Add
}

// Start makes s a context under parent that collects into s's set, empty
// until then.
func (s *Scope) Start(parent context.Context) (context.Context, *Set) {
	s.Context = parent
	return s, &s.set
}

// Value is the set for the metrics key, the parent's values for the rest.
func (s *Scope) Value(k any) any {
	if k == (key{}) {
		return &s.set
	}
	return s.Context.Value(k)
}

// Add adds v to a metric of the request in ctx (nothing outside a request).
func Add(ctx context.Context, name string, v float64) {
	if s, ok := ctx.Value(key{}).(*Set); ok {
		s.Add(name, v)
	}
}

// Add adds v to a metric.
func (s *Set) Add(name string, v float64) {
	s.mu.Lock()
	if s.vals == nil {
		s.vals = map[string]float64{}
	}
	s.vals[name] += v
	s.mu.Unlock()
}

// Attrs are the log attributes that carry the set (none when empty).
func (s *Set) Attrs() []slog.Attr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Attrs(s.vals)
}

type metricDef struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type directive struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []metricDef `json:"Metrics"`
}

// Attrs turns values into Embedded Metric Format attributes of a JSON log
// line: an "_aws" block naming the metrics, and one root field each.
func Attrs(vals map[string]float64) []slog.Attr {
	if len(vals) == 0 {
		return nil
	}
	d := directive{Namespace: Namespace, Dimensions: [][]string{{}}}
	out := make([]slog.Attr, 0, len(vals)+1)
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		unit := "Count"
		if name == QueueWaiting {
			unit = "None"
		}
		d.Metrics = append(d.Metrics, metricDef{Name: name, Unit: unit})
		out = append(out, slog.Float64(name, vals[name]))
	}
	return append(out, slog.Group("_aws",
		slog.Int64("Timestamp", time.Now().UnixMilli()),
		slog.Any("CloudWatchMetrics", []directive{d})))
}
