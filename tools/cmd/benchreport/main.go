// Command benchreport runs catraca's Go benchmarks several times and writes
// docs/benchmarks.md: the median of each metric, and each figure's ratio to
// the baseline measured in the same run on the same machine.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/tools/localenv"
	"github.com/catraca/catraca/tools/testenv"
)

// Modes of the benchmark PostgreSQL: local commits as they come on this
// machine, and commits that wait like an Aurora quorum write.
const (
	local  = "local"
	aurora = "aurora"
	// cluster is the queue benchmark again on a private Redis Cluster
	// (local commits), as ElastiCache Serverless serves the waiting room.
	cluster = "cluster"
)

// comparison names a figure and the baseline it is read against. Every
// target is judged in both commit modes, each with its own verdict line.
type comparison struct {
	title         string
	subject, base string // benchmark names without the -N suffix; %d is the client count
	metric        string
	baseMetric    string // the baseline's metric when it differs from metric
	ratioMetric   string // the ratio, when the benchmark measures it (paired samples)
	clients       []int
	target        string  // "" for a bound or a reference without target
	want          float64 // the ratio the target asks for
	atMost        bool    // the ratio must stay at or under want (latencies)
	at            []int   // client counts the target applies to
	// everyRun judges the paired ratio of each run, not their median: a
	// target met only on a good run is not met.
	everyRun bool
	// clusterToo judges the target again on the Redis Cluster run.
	clusterToo bool
	// miss is the measured reason a miss in mode has.
	miss func(r *results, mode string) string
	note string // what the figure is, when its title is not enough
}

// seatHolds is BenchmarkSeatHolds at %d clients: the hold, its bound and a
// plain UPDATE interleaved in each sample, with their paired ratios.
const seatHolds = "BenchmarkSeatHolds/interleaved/clients=%d"

// holdModes is BenchmarkHoldModes at %d clients: seat and GA holds with
// prepared statements, with unnamed ones through PgBouncer (the proxy
// mode) and with unnamed ones on direct connections, interleaved in each
// sample, with their paired ratios to the prepared mode.
const holdModes = "BenchmarkHoldModes/interleaved/clients=%d"

// holdMode compares kind's holds with unnamed statements (mode: proxy
// through the pooler, unnamed on direct connections) to the prepared mode;
// the proxy mode carries the target.
func holdMode(title, kind, mode, where string) comparison {
	c := comparison{title: fmt.Sprintf("%s as production sends them: unnamed statements %s vs prepared statements", title, where),
		subject: holdModes, base: holdModes, metric: kind + "-" + mode + "-ops/s", baseMetric: kind + "-prepared-ops/s",
		ratioMetric: kind + "-" + mode + "/" + kind + "-prepared", clients: []int{16, 64}, note: holdModesNote}
	if mode == "proxy" {
		c.target, c.want, c.at = "≥ 0.9× at 16 and 64 clients", 0.9, []int{16, 64}
		c.miss = func(r *results, m string) string {
			bench := fmt.Sprintf(holdModes, 16)
			pooler := r.get(m, bench, kind+"-proxy-pooler-cpu-ms/op")
			proxied := r.get(m, bench, kind+"-proxy-db-cpu-ms/op") + r.get(m, bench, kind+"-proxy-go-cpu-ms/op") + pooler
			prepared := r.get(m, bench, kind+"-prepared-db-cpu-ms/op") + r.get(m, bench, kind+"-prepared-go-cpu-ms/op")
			withPooler := ""
			if pooler > 0 && proxied > 0 {
				withPooler = fmt.Sprintf("; PgBouncer itself spends %.3f ms of CPU per hold on the same 2 cores, in neither figure (with it, CPU alone would allow %.2f×; RDS Proxy runs on hosts of its own)", pooler, prepared/proxied)
			}
			return r.cpuSplit(m, bench, kind+"-proxy-", "a hold through the pooler", bench, kind+"-prepared-", "a prepared one") + withPooler +
				fmt.Sprintf("; the same statements on direct connections, without the pooler's hop, give %.2f×; in proxy mode the takes run in PL/pgSQL functions that keep their plans per server connection (docs/database.md)",
					r.get(m, bench, kind+"-unnamed/"+kind+"-prepared"))
		}
	}
	return c
}

const holdModesNote = "Same run, same event, interleaved: prepared is the mode without a proxy (statements prepared by name and planned when a connection opens, shardstore.Warm); proxy is CATRACA_DB_PROXY=true through PgBouncer in transaction pooling mode with as many server connections as the prepared pool has (the functions' mode behind RDS Proxy: every statement unnamed, planned on every execution, on whichever server connection is free); unnamed is the proxy mode's statements on direct connections, which separates the statements from the pooler's hop (docs/database.md)."

// queueHTTP is BenchmarkQueueHTTP at %d clients: raw ZADD and ZRANK, the
// handler's joins and status calls in process and over loopback HTTP,
// interleaved in each sample, with their paired ratios.
const queueHTTP = "BenchmarkQueueHTTP/interleaved/clients=%d"

var comparisons = []comparison{
	{title: "GA holds: the default strategy (64 slotted counters) vs one counter row",
		subject: "BenchmarkGAHolds/slotted-64/clients=%d", base: "BenchmarkGAHolds/single-row/clients=%d", metric: "ops/s",
		clients: []int{16, 64}, target: "≥ 5× at 64 clients (set for Aurora-like commits)", want: 5, at: []int{64},
		miss: func(r *results, mode string) string {
			return fmt.Sprintf("one counter row commits one hold per commit, %.2f ms (p50) in this mode: the shorter the commit, the less a single row is contended, so the gap is the commit latency's (%.2f ms Aurora-like)",
				r.commitP50(mode), r.commitP50(aurora))
		}},
	{title: "Seat holds vs the writes-only bound (the rows a hold must write, no checks)",
		subject: seatHolds, base: seatHolds, metric: "hold-ops/s", baseMetric: "bound-ops/s", ratioMetric: "hold/bound",
		clients: []int{4, 16, 64}, target: "≥ 0.9× at 16 and 64 clients (set for Aurora-like commits)", want: 0.9, at: []int{16, 64},
		miss: func(r *results, mode string) string {
			hold := fmt.Sprintf(seatHolds, 16)
			return r.cpuBound(mode, hold, "hold-ops/s", 16) + "; " + r.unsaturated(mode) + "; " +
				r.cpuSplit(mode, hold, "hold-", "a hold", hold, "bound-", "the bound") +
				fmt.Sprintf(" while writing about as much (%.0f against %.0f bytes of WAL per operation)", r.get(mode, hold, "hold-wal-bytes/op"), r.get(mode, hold, "bound-wal-bytes/op")) +
				": the extra is PostgreSQL setting up the checks' larger plan (limit query, seats reached in id order, order checks: over 30 plan nodes against 13) on every execution, not running it (perf: the executor's run matches the bound's), spread over the checks at up to 0.02 ms each; the one larger cut, letting the UPDATE find the seats itself (0.04 ms), gives up the id order that keeps two holds of the same seats from deadlocking (docs/inventory.md)"
		}},
	holdMode("Seat holds", "seat", "proxy", "through PgBouncer"),
	holdMode("GA holds", "ga", "proxy", "through PgBouncer"),
	holdMode("Seat holds", "seat", "unnamed", "on direct connections"),
	holdMode("GA holds", "ga", "unnamed", "on direct connections"),
	{title: "Bound: the writes-only hold vs a plain single-statement UPDATE of the same seats",
		subject: seatHolds, base: seatHolds, metric: "bound-ops/s", baseMetric: "update-ops/s", ratioMetric: "bound/update",
		clients: []int{1, 16, 64}},
	{title: "Webhook deliveries: p99 vs p50 at 16 clients",
		subject: "BenchmarkWebhooks", base: "BenchmarkWebhooks", metric: "p99-ms", baseMetric: "p50-ms",
		clients: []int{16}, target: "≤ 10×", want: 10, atMost: true, at: []int{16},
		miss: func(r *results, mode string) string {
			return r.cpuBound(mode, "BenchmarkWebhooks", "deliveries/s", 16) + "; the rest of the tail is each duplicate delivery waiting on the webhook_events unique index until the first one commits (docs/payments.md), longer with longer commits"
		}},
	{title: "Search over 100,000 events (realistic mix) vs a primary-key read of one event: p50",
		subject: "BenchmarkSearch", base: "BenchmarkSearch", metric: "p50-ms", baseMetric: "pk-p50-ms",
		clients: []int{4}, target: "≤ 3×", want: 3, atMost: true, at: []int{4},
		miss: func(r *results, mode string) string {
			return fmt.Sprintf("a primary-key read fetches one event (%.2f ms); a search is answered by the instance's in-memory index in microseconds, then reads its page of up to 20 events by primary key in one round trip (PostgreSQL alone: %.2f ms; docs/read-path.md)",
				r.get(mode, "BenchmarkSearch", "pk-p50-ms"), r.get(mode, "BenchmarkSearch", "pg-p50-ms"))
		}},
	{title: "Search over 100,000 events (realistic mix) vs a primary-key read of one event: p99",
		subject: "BenchmarkSearch", base: "BenchmarkSearch", metric: "p99-ms", baseMetric: "pk-p99-ms",
		clients: []int{4}, target: "≤ 10×", want: 10, atMost: true, at: []int{4},
		miss: func(r *results, mode string) string {
			return fmt.Sprintf("a search's tail is its one read of a page of up to 20 events by primary key on a loaded machine; the index answers in microseconds (PostgreSQL alone: p99 %.2f ms; docs/read-path.md)",
				r.get(mode, "BenchmarkSearch", "pg-p99-ms"))
		}},
	{title: "Waiting-room joins through the handler, called in process, vs raw Redis ZADD",
		subject: queueHTTP, base: queueHTTP, metric: "join-ops/s", baseMetric: "zadd-ops/s", ratioMetric: "join/zadd",
		clients: []int{16, 64}, target: "≥ 0.5× at 16 and 64 clients in every run", want: 0.5, everyRun: true, clusterToo: true, at: []int{16, 64}, note: inProcessNote,
		miss: func(r *results, mode string) string { return r.perRequest(mode, "join", "zadd", "ZADD") }},
	{title: "Waiting-room status through the handler, called in process, vs raw Redis ZRANK",
		subject: queueHTTP, base: queueHTTP, metric: "status-ops/s", baseMetric: "zrank-ops/s", ratioMetric: "status/zrank",
		clients: []int{16, 64}, target: "≥ 0.5× at 16 and 64 clients in every run", want: 0.5, everyRun: true, clusterToo: true, at: []int{16, 64}, note: inProcessNote,
		miss: func(r *results, mode string) string { return r.perRequest(mode, "status", "zrank", "ZRANK") }},
	{title: "For information: waiting-room joins over loopback HTTP vs raw Redis ZADD",
		subject: queueHTTP, base: queueHTTP, metric: "join-http-ops/s", baseMetric: "zadd-ops/s", ratioMetric: "join-http/zadd",
		clients: []int{16, 64}, note: loopbackNote},
	{title: "For information: waiting-room status over loopback HTTP vs raw Redis ZRANK",
		subject: queueHTTP, base: queueHTTP, metric: "status-http-ops/s", baseMetric: "zrank-ops/s", ratioMetric: "status-http/zrank",
		clients: []int{16, 64}, note: loopbackNote},
}

// Why the queue targets are read in process, and what the loopback HTTP
// figures add (docs/waiting-room.md says the same).
const (
	inProcessNote = "The handler is called as the Lambda adapter calls it in production: a request handed to ServeHTTP in the function's process, the session verified, one Redis script, the JSON answer. No HTTP client or server stands between the load and the handler, because none runs in the function: API Gateway and the Lambda service parse HTTP outside it, on their own machines. The baseline is a raw command through the same Redis client (same pool, same clients), so both figures pay the same go-redis and socket cost; the two run interleaved in 21 short rounds per sample and the ratio is the median of the rounds' paired ratios, so the machine's load weighs on both sides alike; each run's ratio is shown with its spread, its lowest and highest round's. The loopback HTTP figures follow as information."
	loopbackNote  = "For information, no target: the same requests sent by a net/http client to an httptest server in the benchmark's own process, on the same 2 cores as Redis. The HTTP client and server cost this process several times what the whole in-process request costs (join-http-go-cpu-µs/op against join-go-cpu-µs/op in All results), which in production is work API Gateway and the Lambda service do outside the function; the target is read in process (above)."
)

var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// auroraRuns are the benchmarks run again under Aurora-like commits: every
// target's figures and baselines, at the client counts the targets name,
// and the commit latency that mode gives (seat holds also at 4 clients,
// below saturation). Two runs, because a pattern with
// sub-benchmark levels leaves out the benchmarks that have none.
var auroraRuns = []benchRun{
	{`^Benchmark(CommitLatency|SeatHolds|GAHolds|Peers|QueueHTTP|HoldModes)$/./^(clients=(4|16|64)|commits)$`, []string{"./shared/inventory", "./shared/shardstore", "./shared/api"}},
	{`^Benchmark(Webhooks|Search)$`, []string{"./shared/api"}},
}

// benchRun is a go test -bench pattern and the packages it runs in.
type benchRun struct {
	pattern string
	pkgs    []string
}

// results holds every sample: mode → benchmark → metric → values.
type results struct {
	samples map[string]map[string]map[string][]float64
	order   []string          // benchmark names of the local mode, first seen first
	load    map[string]string // mode → load averages while its benchmarks ran
	modes   []string          // the modes measured, local first
}

func (r *results) get(mode, bench, metric string) float64 {
	return median(r.samples[mode][bench][metric])
}

// commitP50 is one commit's median latency in mode.
func (r *results) commitP50(mode string) float64 {
	return r.get(mode, "BenchmarkCommitLatency/one-row/commits", "commit-p50-ms")
}

// cpuBound explains a miss with the figures that show whether the machine,
// not the commit, sets the pace: each client's time per operation against
// one commit's latency in that mode, and the load while it ran.
func (r *results) cpuBound(mode, bench, metric string, clients int) string {
	perOp := float64(clients) / r.get(mode, bench, metric) * 1000
	return fmt.Sprintf("each of %d clients spends %.1f ms per operation against a %.2f ms commit (p50) with the cores saturated (load average %s): CPU queueing sets the pace",
		clients, perOp, r.commitP50(mode), r.load[mode])
}

// unsaturated is the seat holds' ratio at 4 clients, where under
// Aurora-like commits the cores are not saturated, with the CPU the run
// kept busy (PostgreSQL and this process, in cores).
func (r *results) unsaturated(mode string) string {
	bench := fmt.Sprintf(seatHolds, 4)
	busy := r.get(mode, bench, "hold-ops/s") * (r.get(mode, bench, "hold-db-cpu-ms/op") + r.get(mode, bench, "hold-go-cpu-ms/op")) / 1000
	return fmt.Sprintf("at 4 clients, where holds kept %.2f of %d cores busy, the ratio is %.2f×", busy, runtime.NumCPU(), r.get(mode, bench, "hold/bound"))
}

// cpuSplit compares the CPU per operation of two benchmarks, split between
// PostgreSQL's backends and this Go process (loadstat.ReportCPU), and the
// throughput ratio that CPU alone would allow.
func (r *results) cpuSplit(mode, a, aPrefix, aName, b, bPrefix, bName string) string {
	adb, ago := r.get(mode, a, aPrefix+"db-cpu-ms/op"), r.get(mode, a, aPrefix+"go-cpu-ms/op")
	bdb, bgo := r.get(mode, b, bPrefix+"db-cpu-ms/op"), r.get(mode, b, bPrefix+"go-cpu-ms/op")
	if adb+ago == 0 {
		return "no CPU figures measured"
	}
	return fmt.Sprintf("%s costs %.3f ms of PostgreSQL CPU and %.3f ms of Go CPU against %.3f + %.3f ms for %s (CPU alone would allow %.2f×)",
		aName, adb, ago, bdb, bgo, bName, (bdb+bgo)/(adb+ago))
}

// perRequest explains a queue miss: the Go and Redis CPU one request
// through the handler in process (variant handler of BenchmarkQueueHTTP at
// 16 clients) costs, against the raw command (variant raw) through the
// same Redis client, and the ratio that CPU alone would allow.
func (r *results) perRequest(mode, handler, raw, command string) string {
	bench := fmt.Sprintf(queueHTTP, 16)
	hGo, hRedis := r.get(mode, bench, handler+"-go-cpu-µs/op"), r.get(mode, bench, handler+"-redis-cpu-µs/op")
	rGo, rRedis := r.get(mode, bench, raw+"-go-cpu-µs/op"), r.get(mode, bench, raw+"-redis-cpu-µs/op")
	bound := 0.0
	if hGo+hRedis > 0 {
		bound = (rGo + rRedis) / (hGo + hRedis)
	}
	return fmt.Sprintf("2 cores shared by this process, Redis and other work (load average %s): a request costs %.1f µs of Go CPU and %.1f µs of Redis CPU against %.1f + %.1f µs for a raw %s through the same client (CPU alone would allow %.2f×); Redis runs the script on its one thread, and most of the script's cost is Redis's fixed cost per script and per command inside it (docs/waiting-room.md)",
		r.load[mode], hGo, hRedis, rGo, rRedis, command, bound)
}

// benchName is a comparison's benchmark at n clients.
func benchName(pattern string, n int) string {
	if strings.Contains(pattern, "%d") {
		return fmt.Sprintf(pattern, n)
	}
	return pattern
}

func main() {
	count := flag.Int("count", 3, "runs per benchmark (the report shows medians)")
	out := flag.String("out", "docs/benchmarks.md", "report path")
	fans := flag.Int("onsale-fans", 5000, "fans of the on-sale simulation run after the benchmarks (0: none)")
	delay := flag.Int("commit-delay", 2000, "commit_delay (µs) of the Aurora-like mode (0: local commits only)")
	only := flag.String("bench", "", "run only the benchmarks matching this go test -bench pattern, in both modes (a partial report)")
	flag.Parse()
	pkgs := flag.Args()
	if len(pkgs) == 0 {
		pkgs = []string{"./shared/..."}
	}
	r, err := measure(*count, *delay, *only, pkgs)
	if err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# Benchmarks\n\nGenerated by `%s` (`make bench` runs `-count 3 -onsale-fans 5000 ./shared/...`) on %s (%s, %d runs each, medians; load average %s). Figures drift between machines and runs;\nread each one against its baseline from the same run.\n\n",
		command(), time.Now().UTC().Format(time.RFC3339), host, *count, r.loads())
	writeModes(&b, r, *delay)
	writeTargets(&b, r)
	for _, c := range comparisons {
		writeComparison(&b, r, c)
	}
	writePeers(&b, r)
	b.WriteString("## All results\n\n| mode | benchmark | metric | median | runs |\n|---|---|---|---:|---:|\n")
	for _, mode := range r.modes {
		names := r.order
		if mode == aurora {
			names = slices.Sorted(maps.Keys(r.samples[aurora]))
		}
		for _, name := range names {
			metrics := slices.Sorted(maps.Keys(r.samples[mode][name]))
			for _, k := range metrics {
				if k == "ns/op" {
					continue
				}
				v := r.samples[mode][name][k]
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", mode, strings.TrimPrefix(name, "Benchmark"), k, format(median(v)), len(v))
			}
		}
	}
	// Written before the on-sale run too: a run stopped during the
	// simulation keeps its benchmark figures.
	if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %s", *out)
	if *fans > 0 {
		if err := onsaleSummary(&b, *fans, *delay); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
			log.Fatal(err)
		}
		log.Printf("wrote %s with the on-sale summary", *out)
	}
}

// measure runs the benchmarks of pkgs with local commits, and those that
// depend on commit latency again under the Aurora-like mode, on private
// servers it stops at the end.
func measure(count, delay int, only string, pkgs []string) (*results, error) {
	env, stop, err := privateServers()
	if err != nil {
		return nil, err
	}
	defer stop()
	r := &results{samples: map[string]map[string]map[string][]float64{}, load: map[string]string{}, modes: []string{local}}
	load0 := loadAverage()
	runs := auroraRuns
	pattern := "."
	if only != "" {
		pattern = only
		runs = []benchRun{{only, pkgs}}
	}
	if r.order, err = runBenchmarks(r, local, env, count, pattern, pkgs); err != nil {
		return nil, err
	}
	r.load[local] = load0 + " at the start, " + loadAverage() + " at the end"
	if err := measureCluster(r, env, count); err != nil {
		return nil, err
	}
	if delay > 0 {
		load0 = loadAverage()
		env = append(env, fmt.Sprintf("CATRACA_TEST_COMMIT_DELAY=%d", delay))
		for _, run := range runs {
			if _, err := runBenchmarks(r, aurora, env, count, run.pattern, run.pkgs); err != nil {
				return nil, err
			}
		}
		r.load[aurora] = load0 + " at the start, " + loadAverage() + " at the end"
		r.modes = append(r.modes, aurora)
	}
	return r, nil
}

// loads describes the load averages of every mode's run.
func (r *results) loads() string {
	var parts []string
	for _, mode := range r.modes {
		parts = append(parts, fmt.Sprintf("%s %s", r.load[mode], mode))
	}
	return strings.Join(parts, "; ") + ", on " + strconv.Itoa(runtime.NumCPU()) + " cores"
}

// command is how this report was made, flags included, so that a reduced
// run says so in its header.
func command() string {
	return strings.TrimSpace("go run ./tools/cmd/benchreport " + strings.Join(os.Args[1:], " "))
}

// measureCluster runs the queue benchmark again with the app on a private
// Redis Cluster (three primaries with a replica each, on free ports), as
// ElastiCache Serverless serves the waiting room; its samples go under
// the cluster mode.
func measureCluster(r *results, env []string, count int) error {
	c, err := localenv.FreeCluster(filepath.Join(localenv.DataDir(testenv.RepoRoot(), ".local/bench"), "redis-cluster"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	defer func() {
		if err := c.Down(); err != nil {
			log.Printf("stop benchmark cluster: %v", err)
		}
	}()
	if err := c.Up(ctx); err != nil {
		return err
	}
	load0 := loadAverage()
	env = append(slices.Clone(env), "CATRACA_TEST_REDIS=cluster", fmt.Sprintf("CATRACA_TEST_REDIS_CLUSTER_PORT=%d", c.Ports[0]))
	if _, err := runBenchmarks(r, cluster, env, count, `^BenchmarkQueueHTTP$/^interleaved$/^clients=(16|64)$`, []string{"./shared/api"}); err != nil {
		return err
	}
	r.load[cluster] = load0 + " at the start, " + loadAverage() + " at the end"
	return nil
}

// privateServers starts a PostgreSQL and a Redis of the benchmarks' own, on
// free ports with a fresh data folder, so that the commit delay and the load
// touch nobody else's tests; it returns the environment pointing the tests
// at them.
func privateServers() ([]string, func(), error) {
	dir := localenv.DataDir(testenv.RepoRoot(), ".local/bench")
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, err
	}
	pg, err := localenv.FreePort()
	if err != nil {
		return nil, nil, err
	}
	rd, err := localenv.FreePort()
	if err != nil {
		return nil, nil, err
	}
	pooler, err := localenv.FreePort()
	if err != nil {
		return nil, nil, err
	}
	// As many server connections per database as a benchmark's pool has
	// (testenv.BaseConfig): the proxy mode's figures then differ from the
	// direct ones by the statements and the hop, not by a smaller pool.
	e := localenv.Env{Dir: dir, PGPort: pg, RedisPort: rd, PoolerPort: pooler, PoolSize: 32}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := e.Up(ctx); err != nil {
		e.Down()
		return nil, nil, err
	}
	log.Printf("benchmark servers: PostgreSQL :%d, Redis :%d, PgBouncer :%d, data in %s", pg, rd, pooler, dir)
	env := append(os.Environ(), "CATRACA_TEST_DIR="+dir, fmt.Sprintf("CATRACA_TEST_PG_PORT=%d", pg), fmt.Sprintf("CATRACA_TEST_REDIS_PORT=%d", rd),
		fmt.Sprintf("CATRACA_TEST_POOLER_PORT=%d", pooler))
	return env, func() {
		if err := e.Down(); err != nil {
			log.Printf("stop benchmark servers: %v", err)
		}
	}, nil
}

// runBenchmarks runs the benchmarks matching pattern in pkgs with env and
// files their samples under mode; it returns the benchmark names in order.
func runBenchmarks(r *results, mode string, env []string, count int, pattern string, pkgs []string) ([]string, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchtime", "1x", "-count", strconv.Itoa(count), "-timeout", "60m"}, pkgs...)
	log.Printf("%s commits: go %s", mode, strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	os.Stdout.Write(raw)
	if err != nil {
		return nil, fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	samples := r.samples[mode]
	if samples == nil {
		samples = map[string]map[string][]float64{}
		r.samples[mode] = samples
	}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		if samples[name] == nil {
			samples[name] = map[string][]float64{}
			order = append(order, name)
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				samples[name][f[i+1]] = append(samples[name][f[i+1]], v)
			}
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("%s commits: no benchmark results parsed", mode)
	}
	return order, nil
}

// loadAverage is the 1-minute load average of this machine, or "?".
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "?"
}

// writeModes states the commit latency each mode gave, measured.
func writeModes(b *strings.Builder, r *results, delay int) {
	b.WriteString("## Commit latency of the two modes\n\nOne client, one single-row UPDATE per transaction, on the benchmarks' private PostgreSQL. The Aurora-like mode sets `commit_delay` on the benchmark databases with `commit_siblings = 0`: every commit sleeps before its WAL flush while holding its row locks, as a commit waiting for a storage quorum does (docs/inventory.md).\n\n| mode | commit p50 | commit p99 | commits/s |\n|---|---:|---:|---:|\n")
	for _, mode := range r.modes {
		name := "local commits"
		if mode == aurora {
			name = fmt.Sprintf("Aurora-like (commit_delay = %d µs)", delay)
		}
		fmt.Fprintf(b, "| %s | %.2f ms | %.2f ms | %.0f |\n", name, r.get(mode, "BenchmarkCommitLatency/one-row/commits", "commit-p50-ms"),
			r.get(mode, "BenchmarkCommitLatency/one-row/commits", "commit-p99-ms"), r.get(mode, "BenchmarkCommitLatency/one-row/commits", "commits/s"))
	}
	b.WriteString("\n")
}

// ratio is a comparison's figure at n clients in mode, 0 when missing.
func (c comparison) ratio(r *results, mode string, n int) (subject, base, ratio float64) {
	bm := c.baseMetric
	if bm == "" {
		bm = c.metric
	}
	subject = r.get(mode, benchName(c.subject, n), c.metric)
	base = r.get(mode, benchName(c.base, n), bm)
	if subject == 0 || base == 0 {
		return subject, base, 0
	}
	if c.ratioMetric != "" {
		return subject, base, r.get(mode, benchName(c.subject, n), c.ratioMetric)
	}
	return subject, base, subject / base
}

// verdict says whether c's target is met in mode in this run, with the
// figures.
func (c comparison) verdict(r *results, mode string) (bool, string) {
	met := true
	var got []string
	for _, n := range c.at {
		if c.everyRun && c.ratioMetric != "" {
			runs := r.samples[mode][benchName(c.subject, n)][c.ratioMetric]
			for _, v := range runs {
				met = met && (v >= c.want && !c.atMost || v <= c.want && c.atMost)
			}
			met = met && len(runs) > 0
			got = append(got, fmt.Sprintf("%s at %d clients (runs)", r.eachRun(mode, benchName(c.subject, n), c.ratioMetric), n))
			continue
		}
		_, _, v := c.ratio(r, mode, n)
		ok := v > 0 && (v >= c.want && !c.atMost || v <= c.want && c.atMost)
		met = met && ok
		got = append(got, fmt.Sprintf("%.2f× at %d clients", v, n))
	}
	return met, strings.Join(got, ", ")
}

// eachRun is a paired ratio of every run in order, each with its spread
// when the benchmark reported one (loadstat.Interleave: the lowest and
// highest round's ratio): "0.52× (0.47–0.58), 0.55× (…)".
func (r *results) eachRun(mode, bench, ratio string) string {
	s := r.samples[mode][bench]
	lo, hi := s[ratio+"-min"], s[ratio+"-max"]
	var each []string
	for i, v := range s[ratio] {
		e := fmt.Sprintf("%.2f×", v)
		if i < len(lo) && i < len(hi) {
			e += fmt.Sprintf(" (%.2f–%.2f)", lo[i], hi[i])
		}
		each = append(each, e)
	}
	return strings.Join(each, ", ")
}

// measured tells whether mode has c's figure at some client count its
// target names: a partial run (-bench) measures few.
func (c comparison) measured(r *results, mode string) bool {
	metric := c.metric
	if c.ratioMetric != "" {
		metric = c.ratioMetric
	}
	for _, n := range c.at {
		if len(r.samples[mode][benchName(c.subject, n)][metric]) > 0 {
			return true
		}
	}
	return false
}

// modesOf are the modes c is shown and judged in: the commit modes, and
// the Redis Cluster run for the waiting room's figures when it ran.
func (c comparison) modesOf(r *results) []string {
	if c.clusterToo && r.samples[cluster] != nil {
		return append(slices.Clone(r.modes), cluster)
	}
	return r.modes
}

// writeTargets writes one line per target and mode: met, or not met with
// the measured reason.
func writeTargets(b *strings.Builder, r *results) {
	b.WriteString("## Targets\n\nEvery target in both commit modes, each line its verdict in that mode.\n\n| figure | target | mode | this run | verdict |\n|---|---|---|---|---|\n")
	for _, c := range comparisons {
		if c.target == "" {
			continue
		}
		for _, mode := range c.modesOf(r) {
			if !c.measured(r, mode) {
				fmt.Fprintf(b, "| %s | %s | %s | — | not measured in this run (-bench) |\n", c.title, c.target, mode)
				continue
			}
			met, got := c.verdict(r, mode)
			v := "met"
			if !met {
				v = "not met"
				if c.miss != nil {
					v += ": " + c.miss(r, mode)
				}
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", c.title, c.target, mode, got, v)
		}
	}
	for _, mode := range r.modes {
		b.WriteString(peersVerdict(r, mode))
	}
	b.WriteString("\n")
}

func writeComparison(b *strings.Builder, r *results, c comparison) {
	target := c.target
	switch {
	case target == "" && c.note != "":
		target = "none, for information"
	case target == "":
		target = "none; a bound or a reference for the figures above"
	}
	fmt.Fprintf(b, "## %s\n\nTarget: %s.\n\n", c.title, target)
	if c.note != "" {
		fmt.Fprintf(b, "%s\n\n", c.note)
	}
	if c.ratioMetric == "" {
		fmt.Fprintf(b, "| mode | clients | %s | baseline | ratio |\n|---|---:|---:|---:|---:|\n", c.metric)
	} else {
		fmt.Fprintf(b, "| mode | clients | %s | baseline | ratio (median of runs) | each run: median of its rounds (lowest–highest round) |\n|---|---:|---:|---:|---:|---|\n", c.metric)
	}
	for _, mode := range c.modesOf(r) {
		for _, n := range c.clients {
			s, base, v := c.ratio(r, mode, n)
			if v == 0 {
				continue
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %.2f× |", mode, n, format(s), format(base), v)
			if c.ratioMetric != "" {
				fmt.Fprintf(b, " %s |", r.eachRun(mode, benchName(c.subject, n), c.ratioMetric))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n")
}

// peers are the strategies BenchmarkPeers runs, catraca's first.
var peers = []struct{ name, says string }{
	{"catraca-slotted", "catraca: 64 counter rows, a free one taken with SKIP LOCKED"},
	{"pretix-quota-lock", "pretix: advisory lock on the quota (shared on the event), then a count of what the quota's holds and orders use"},
	{"alfio-skip-locked", "alf.io: one row per place, the first free one taken with SKIP LOCKED and marked pending"},
	{"naive-counter", "naive: one counter row"},
}

// peerPlaces are the hold sizes BenchmarkPeers measures.
var peerPlaces = []int{1, 2}

// peerName is a strategy's sub-benchmark for holds of places at n clients.
func peerName(strategy string, places, n int) string {
	if places > 1 {
		strategy += fmt.Sprintf("-%d-places", places)
	}
	return fmt.Sprintf("BenchmarkPeers/%s/clients=%d", strategy, n)
}

// peersVerdict is the targets table's line for the peers in mode: catraca
// ahead of every peer in holds/s at 16 and 64 clients, for holds of one
// place and of two, read from the paired samples (catraca's throughput
// over the peer's in the same round, median).
func peersVerdict(r *results, mode string) string {
	const line = "| GA holds beside the open-source peers' strategies (holds/s, paired samples) | ahead of every peer at 16 and 64 clients, holds of 1 and 2 places | "
	measured := false
	for _, p := range peers {
		measured = measured || r.samples[mode][peerName(p.name, 1, 16)] != nil
	}
	if !measured {
		return line + mode + " | — | not measured in this run (-bench) |\n"
	}
	var behind []string
	for _, places := range peerPlaces {
		for _, n := range []int{16, 64} {
			ours := peerName(peers[0].name, places, n)
			for _, p := range peers[1:] {
				name := peerName(p.name, places, n)
				if ratio := r.get(mode, name, "catraca/peer"); ratio <= 1 {
					behind = append(behind, fmt.Sprintf("%s, %d place(s) at %d clients: catraca at %.2f× its holds/s in the same rounds (%.0f vs %.0f holds/s, spread between samples %.0f %% and %.0f %%)",
						p.name, places, n, ratio, r.get(mode, ours, "holds/s"), r.get(mode, name, "holds/s"),
						r.get(mode, ours, "spread-%"), r.get(mode, name, "spread-%")))
				}
			}
		}
	}
	v := "met"
	if len(behind) > 0 {
		v = "not met: behind " + strings.Join(behind, "; ") + "; " + r.cpuBound(mode, peerName(peers[0].name, 1, 16), "holds/s", 16) + "; " +
			r.cpuSplit(mode, peerName(peers[0].name, 1, 16), "", "catraca's hold of one place", peerName("alfio-skip-locked", 1, 16), "", "alf.io's") +
			": the same hold with the same checks, so the gap is the take itself (docs/inventory.md)"
	}
	return line + mode + " | see Peers below | " + v + " |\n"
}

func writePeers(b *strings.Builder, r *results) {
	if r.samples[local][peerName(peers[0].name, 1, 16)] == nil {
		return // not in the packages measured
	}
	b.WriteString("## Peers: the same GA hold with the open-source peers' strategies\n\n" +
		"Same run, same database, same mode, same job: every strategy goes through catraca's hold statements (the account's limit lock, the idempotency key, the per-account limit check, the pending order and its item, one round trip) and differs only in how it takes the places (`BenchmarkPeers`, shared/shardstore/peers_bench_test.go; docs/inventory.md says what each does). " +
		"Each strategy is sampled for the same time in rounds that interleave them; each figure is the median of its samples, the spread is how far its slowest and fastest sample lay apart, and catraca ÷ peer is the median of catraca's throughput over the peer's in the same round (the verdict reads it).\n\n")
	for _, mode := range r.modes {
		for _, places := range peerPlaces {
			fmt.Fprintf(b, "%s commits, holds of %d place(s):\n\n| strategy | holds/s, 16 clients (spread) | p99, 16 | catraca ÷ peer, 16 | holds/s, 64 clients (spread) | p99, 64 | catraca ÷ peer, 64 | CPU per hold at 16: PostgreSQL + Go |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", mode, places)
			for i, p := range peers {
				fmt.Fprintf(b, "| %s |", p.says)
				for _, n := range []int{16, 64} {
					name := peerName(p.name, places, n)
					ratio := fmt.Sprintf("%.2f×", r.get(mode, name, "catraca/peer"))
					if i == 0 {
						ratio = "—"
					}
					fmt.Fprintf(b, " %s (%.0f %%) | %s ms | %s |", format(r.get(mode, name, "holds/s")), r.get(mode, name, "spread-%"),
						format(r.get(mode, name, "p99-ms")), ratio)
				}
				name := peerName(p.name, places, 16)
				fmt.Fprintf(b, " %.3f + %.3f ms |\n", r.get(mode, name, "db-cpu-ms/op"), r.get(mode, name, "go-cpu-ms/op"))
			}
			b.WriteString("\n")
		}
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func format(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
