package main

import "testing"

func TestVerdict(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{
		aurora: {
			"BenchmarkX/a/clients=64": {"ops/s": {900, 1000, 1100}},
			"BenchmarkX/b/clients=64": {"ops/s": {200, 180, 220}},
		},
		local: {"BenchmarkW": {"p50-ms": {10}, "p99-ms": {120}}},
	}}
	ratio := comparison{subject: "BenchmarkX/a/clients=%d", base: "BenchmarkX/b/clients=%d", metric: "ops/s", want: 5, at: []int{64}, modes: []string{aurora}}
	if met, got := ratio.verdict(r); !met || got != "5.00× at 64 clients (aurora)" {
		t.Errorf("medians 1000 vs 200 against ≥ 5×: met %v, %q", met, got)
	}
	ratio.want = 5.01
	if met, _ := ratio.verdict(r); met {
		t.Error("5.00× met a target of 5.01×")
	}
	tail := comparison{subject: "BenchmarkW", base: "BenchmarkW", metric: "p99-ms", baseMetric: "p50-ms", want: 10, atMost: true, at: []int{16}, modes: []string{local}}
	if met, got := tail.verdict(r); met || got != "12.00× at 16 clients (local)" {
		t.Errorf("p99 12× p50 against ≤ 10×: met %v, %q", met, got)
	}
	missing := comparison{subject: "BenchmarkNone", base: "BenchmarkW", metric: "p99-ms", want: 10, atMost: true, at: []int{16}, modes: []string{local}}
	if met, _ := missing.verdict(r); met {
		t.Error("a figure that was not measured met its target")
	}
}
