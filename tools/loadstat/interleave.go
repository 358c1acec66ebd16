package loadstat

import (
	"slices"
	"testing"
	"time"
)

// Variant is one operation a benchmark compares with others; seq is unique
// within a run.
type Variant struct {
	Name string
	Op   func(seq int) error
}

// Metrics are what one run of a variant measured, by unit ("ops/s",
// "p50-ms"…); every sample must have "ops/s".
type Metrics map[string]float64

// Interleave runs every variant rounds times through sample, alternating
// them (round r starts with variant r, so none always runs first or last),
// and reports, per variant, the median over rounds of each metric
// ("<name>-<unit>"), and for each pair {a, b} the median of the rounds'
// a/b throughput ratios ("a/b") and their spread, the lowest and highest
// round's ("a/b-min", "a/b-max"): each ratio compares two runs seconds
// apart, so the machine's load, which swings over minutes, weighs on both
// sides alike, and the spread shows how much it still moved one round.
func Interleave(b *testing.B, rounds int, variants []Variant, sample func(Variant) Metrics, pairs ...[2]string) {
	got := map[string][]Metrics{}
	for r := range rounds {
		for i := range variants {
			v := variants[(r+i)%len(variants)]
			got[v.Name] = append(got[v.Name], sample(v))
		}
	}
	for _, v := range variants {
		for unit := range got[v.Name][0] {
			b.ReportMetric(Median(got[v.Name], func(m Metrics) float64 { return m[unit] }), v.Name+"-"+unit)
		}
	}
	for _, p := range pairs {
		ratios := make([]float64, rounds)
		for r := range ratios {
			ratios[r] = got[p[0]][r]["ops/s"] / got[p[1]][r]["ops/s"]
		}
		name := p[0] + "/" + p[1]
		b.ReportMetric(Median(ratios, func(x float64) float64 { return x }), name)
		b.ReportMetric(slices.Min(ratios), name+"-min")
		b.ReportMetric(slices.Max(ratios), name+"-max")
	}
}

// Median is the median of f over xs (the upper one of an even count).
func Median[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// Ms is d in milliseconds, to the microsecond.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
