package loadstat

import (
	"testing"
)

// TestInterleaveReportsRatioSpread: besides the median of the rounds'
// paired ratios, a sample reports the lowest and highest round's, so a
// report can show how far one run's rounds lay apart.
func TestInterleaveReportsRatioSpread(t *testing.T) {
	// Variant b's throughput is 100 in every round; a's, by round: the
	// ratios a/b are 0.4, 0.6, 0.5, 0.9, 0.5.
	a := []float64{40, 60, 50, 90, 50}
	round := map[string]int{}
	res := testing.Benchmark(func(b *testing.B) {
		clear(round)
		Interleave(b, len(a), []Variant{{Name: "a"}, {Name: "b"}}, func(v Variant) Metrics {
			r := round[v.Name]
			round[v.Name]++
			if v.Name == "a" {
				return Metrics{"ops/s": a[r]}
			}
			return Metrics{"ops/s": 100}
		}, [2]string{"a", "b"})
	})
	for name, want := range map[string]float64{"a/b": 0.5, "a/b-min": 0.4, "a/b-max": 0.9, "b-ops/s": 100} {
		if got := res.Extra[name]; got != want {
			t.Errorf("%s = %v, want %v (all: %v)", name, got, want, res.Extra)
		}
	}
}
