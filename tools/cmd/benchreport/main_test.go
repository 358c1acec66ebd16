package main

import (
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{
		aurora: {
			"BenchmarkX/a/clients=64": {"ops/s": {900, 1000, 1100}},
			"BenchmarkX/b/clients=64": {"ops/s": {200, 180, 220}},
		},
		local: {
			"BenchmarkW":               {"p50-ms": {10}, "p99-ms": {120}},
			"BenchmarkY/ab/clients=16": {"a-ops/s": {100, 300, 200}, "b-ops/s": {110, 150, 200}, "a/b": {0.9, 0.95, 1.1}},
		},
	}}
	ratio := comparison{subject: "BenchmarkX/a/clients=%d", base: "BenchmarkX/b/clients=%d", metric: "ops/s", want: 5, at: []int{64}}
	if met, got := ratio.verdict(r, aurora); !met || got != "5.00× at 64 clients" {
		t.Errorf("medians 1000 vs 200 against ≥ 5×: met %v, %q", met, got)
	}
	if met, _ := ratio.verdict(r, local); met {
		t.Error("a target met in a mode that did not measure it")
	}
	ratio.want = 5.01
	if met, _ := ratio.verdict(r, aurora); met {
		t.Error("5.00× met a target of 5.01×")
	}
	tail := comparison{subject: "BenchmarkW", base: "BenchmarkW", metric: "p99-ms", baseMetric: "p50-ms", want: 10, atMost: true, at: []int{16}}
	if met, got := tail.verdict(r, local); met || got != "12.00× at 16 clients" {
		t.Errorf("p99 12× p50 against ≤ 10×: met %v, %q", met, got)
	}
	paired := comparison{subject: "BenchmarkY/ab/clients=%d", base: "BenchmarkY/ab/clients=%d", metric: "a-ops/s", baseMetric: "b-ops/s",
		ratioMetric: "a/b", want: 0.9, at: []int{16}}
	if met, got := paired.verdict(r, local); !met || got != "0.95× at 16 clients" {
		t.Errorf("paired ratios 0.9, 0.95, 1.1 (medians 200 vs 150) against ≥ 0.9×: met %v, %q", met, got)
	}
	// Judged run by run: the median 0.95× hides a run at 0.9×.
	paired.everyRun, paired.want = true, 0.92
	if met, got := paired.verdict(r, local); met || got != "0.90×, 0.95×, 1.10× at 16 clients (runs)" {
		t.Errorf("runs at 0.9, 0.95, 1.1 against ≥ 0.92× in every run: met %v, %q", met, got)
	}
	paired.want = 0.9
	if met, _ := paired.verdict(r, local); !met {
		t.Error("every run at or above 0.9× missed ≥ 0.9× in every run")
	}
	missing := comparison{subject: "BenchmarkNone", base: "BenchmarkW", metric: "p99-ms", want: 10, atMost: true, at: []int{16}}
	if met, _ := missing.verdict(r, local); met {
		t.Error("a figure that was not measured met its target")
	}
}

// TestTargetsEveryMode checks that each target gets one verdict line per
// measured mode, a miss carrying its reason.
func TestTargetsEveryMode(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{local: {}, aurora: {}},
		load: map[string]string{local: "1", aurora: "2"}, modes: []string{local, aurora}}
	var b strings.Builder
	writeTargets(&b, r)
	for _, c := range comparisons {
		if c.target == "" {
			continue
		}
		for _, mode := range r.modes {
			if !strings.Contains(b.String(), "| "+c.title+" | "+c.target+" | "+mode+" | ") {
				t.Errorf("no %s line for %q", mode, c.title)
			}
		}
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "not met |") {
			t.Errorf("a miss without its reason: %s", l)
		}
	}
	if n := strings.Count(b.String(), "| GA holds beside the open-source peers'"); n != 2 {
		t.Errorf("%d peers lines, want one per mode", n)
	}
}

// TestQueueTargetsOnTheCluster: the queue targets get a verdict line of
// the cluster run when there is one, and no other target does.
func TestQueueTargetsOnTheCluster(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{local: {}, aurora: {}},
		load: map[string]string{local: "1", aurora: "2", cluster: "3"}, modes: []string{local, aurora}}
	var b strings.Builder
	writeTargets(&b, r)
	if strings.Contains(b.String(), " | cluster | ") {
		t.Error("a cluster verdict without a cluster run")
	}
	r.samples[cluster] = map[string]map[string][]float64{"BenchmarkQueueHTTP/interleaved/clients=16": {"join/zadd": {0.6, 0.4}}}
	b.Reset()
	writeTargets(&b, r)
	if n := strings.Count(b.String(), " | cluster | "); n != 2 {
		t.Errorf("%d cluster verdicts, want the join's and the status's:\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "| cluster | 0.60×, 0.40× at 16 clients (runs),") {
		t.Errorf("the cluster's join verdict does not list its runs:\n%s", b.String())
	}
}

// TestPeersVerdictReadsPairedRatios: the peers' verdict is met only when
// catraca's paired ratio beats every peer at 16 and 64 clients, and a miss
// names the peer it trails.
func TestPeersVerdictReadsPairedRatios(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{local: {}}, load: map[string]string{local: "1"}}
	for _, p := range peers[1:] {
		for _, places := range peerPlaces {
			for _, n := range []int{16, 64} {
				r.samples[local][peerName(p.name, places, n)] = map[string][]float64{"catraca/peer": {1.2, 0.9, 1.1}}
			}
		}
	}
	if v := peersVerdict(r, local); !strings.Contains(v, "| met |") {
		t.Errorf("medians of 1.1 against every peer: %s", v)
	}
	r.samples[local][peerName("alfio-skip-locked", 2, 64)]["catraca/peer"] = []float64{1.2, 0.9, 0.95}
	if v := peersVerdict(r, local); !strings.Contains(v, "not met: behind alfio-skip-locked, 2 place(s) at 64 clients") {
		t.Errorf("a median of 0.95 against alf.io at 64 clients: %s", v)
	}
}

// TestQueueTargetsReadTheHandlerInProcess: the waiting-room targets face
// the handler called as the Lambda adapter calls it, through the ratio
// paired with its raw command in each round; the loopback HTTP figures are
// reported beside them, without a target.
func TestQueueTargetsReadTheHandlerInProcess(t *testing.T) {
	var targets, loopback int
	for _, c := range comparisons {
		if !strings.HasPrefix(c.subject, "BenchmarkQueueHTTP/") {
			continue
		}
		if c.target != "" {
			targets++
			if c.ratioMetric != "join/zadd" && c.ratioMetric != "status/zrank" {
				t.Errorf("target %q reads %s", c.title, c.ratioMetric)
			}
		} else if strings.Contains(c.ratioMetric, "-http/") {
			loopback++
		}
	}
	if targets != 2 || loopback != 2 {
		t.Errorf("%d queue targets and %d loopback references, want 2 and 2", targets, loopback)
	}
}

// TestQueueMissReadsThePairedSample: a queue target's verdict reads each
// run's paired ratio of the interleaved sample, and its not-met reason the
// per-variant CPU figures.
func TestQueueMissReadsThePairedSample(t *testing.T) {
	sample := func() map[string][]float64 {
		return map[string][]float64{
			"join-ops/s": {40000}, "zadd-ops/s": {50000}, "join/zadd": {0.4, 0.45, 0.42},
			"join-go-cpu-µs/op": {30}, "join-redis-cpu-µs/op": {25}, "zadd-go-cpu-µs/op": {10}, "zadd-redis-cpu-µs/op": {10},
		}
	}
	r := &results{samples: map[string]map[string]map[string][]float64{local: {
		"BenchmarkQueueHTTP/interleaved/clients=16": sample(), "BenchmarkQueueHTTP/interleaved/clients=64": sample()}},
		load: map[string]string{local: "3"}}
	for _, c := range comparisons {
		if c.ratioMetric != "join/zadd" {
			continue
		}
		met, got := c.verdict(r, local)
		if want := "0.40×, 0.45×, 0.42× at 16 clients (runs), 0.40×, 0.45×, 0.42× at 64 clients (runs)"; met || got != want {
			t.Errorf("verdict %v %q, want each run's paired ratio %q, not met", met, got, want)
		}
		if why := c.miss(r, local); !strings.Contains(why, "30.0 µs of Go CPU and 25.0 µs of Redis CPU against 10.0 + 10.0 µs for a raw ZADD") {
			t.Errorf("miss reason %q", why)
		}
	}
}

// TestRunsShowTheirSpread: a paired ratio judged run by run shows each
// run's lowest and highest round beside its median, and a comparison's
// table lists every run, the cluster run's rows included.
func TestRunsShowTheirSpread(t *testing.T) {
	sample := map[string][]float64{"join-ops/s": {30000, 32000}, "zadd-ops/s": {50000, 52000},
		"join/zadd": {0.55, 0.6}, "join/zadd-min": {0.5, 0.52}, "join/zadd-max": {0.61, 0.7}}
	r := &results{samples: map[string]map[string]map[string][]float64{
		local:   {"BenchmarkQueueHTTP/interleaved/clients=16": sample},
		cluster: {"BenchmarkQueueHTTP/interleaved/clients=16": sample}},
		load: map[string]string{local: "1", cluster: "2"}, modes: []string{local}}
	for _, c := range comparisons {
		if c.ratioMetric != "join/zadd" {
			continue
		}
		c.at = []int{16}
		if met, got := c.verdict(r, local); !met || got != "0.55× (0.50–0.61), 0.60× (0.52–0.70) at 16 clients (runs)" {
			t.Errorf("verdict %v %q", met, got)
		}
		var b strings.Builder
		writeComparison(&b, r, c)
		for _, mode := range []string{local, cluster} {
			if row := "| " + mode + " | 16 | 32000 | 52000 | 0.60× | 0.55× (0.50–0.61), 0.60× (0.52–0.70) |"; !strings.Contains(b.String(), row) {
				t.Errorf("no row %q in\n%s", row, b.String())
			}
		}
	}
}

// TestPartialRunsJudgeOnlyWhatTheyMeasured: a run of a few benchmarks
// (-bench) says the others' targets were not measured instead of judging
// them on zeros ("0.00× … not met").
func TestPartialRunsJudgeOnlyWhatTheyMeasured(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{local: {
		"BenchmarkQueueHTTP/interleaved/clients=16": {"join-ops/s": {3}, "zadd-ops/s": {5}, "join/zadd": {0.6}},
		"BenchmarkQueueHTTP/interleaved/clients=64": {"join-ops/s": {3}, "zadd-ops/s": {5}, "join/zadd": {0.6}}}},
		load: map[string]string{local: "1"}, modes: []string{local}}
	var b strings.Builder
	writeTargets(&b, r)
	for _, l := range strings.Split(b.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "| Waiting-room joins"):
			if !strings.HasSuffix(l, "| met |") {
				t.Errorf("the measured target: %s", l)
			}
		case strings.HasPrefix(l, "| ") && strings.Contains(l, " | local | "):
			if !strings.HasSuffix(l, "| not measured in this run (-bench) |") {
				t.Errorf("a target this run did not measure: %s", l)
			}
		}
	}
}

// TestHoldModesMissCountsThePooler: the proxy mode's miss reason adds
// PgBouncer's own CPU per hold, which neither the backends' nor the Go
// process's figure holds, to the CPU bound.
func TestHoldModesMissCountsThePooler(t *testing.T) {
	r := &results{samples: map[string]map[string]map[string][]float64{local: {"BenchmarkHoldModes/interleaved/clients=16": {
		"seat-proxy-db-cpu-ms/op": {0.8}, "seat-proxy-go-cpu-ms/op": {0.1}, "seat-proxy-pooler-cpu-ms/op": {0.1},
		"seat-prepared-db-cpu-ms/op": {0.8}, "seat-prepared-go-cpu-ms/op": {0.1}}}}}
	why := holdMode("Seat holds", "seat", "proxy", "through PgBouncer").miss(r, local)
	if !strings.Contains(why, "PgBouncer itself spends 0.100 ms of CPU per hold on the same 2 cores, in neither figure (with it, CPU alone would allow 0.90×") {
		t.Errorf("miss reason %q", why)
	}
}
