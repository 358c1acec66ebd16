package api_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/redisconn"
	"github.com/catraca/catraca/shared/rediskey"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/loadstat"
)

// queueRounds and queueOps size BenchmarkQueueHTTP: every sample runs each
// variant queueRounds times for queueOps requests, interleaved: many short
// rounds, so that the load other work puts on the shared cores, which
// swings within seconds, weighs on a pair's two runs alike. The handler's
// variants take their fans in turn from one cursor, so a sample calls each
// of the 20,000 fans under 4 times: far below the bucket every account
// spends from (fanBurst in shared/queue), which would answer 429 instead.
const (
	queueRounds = 21
	queueOps    = 800
)

// BenchmarkQueueHTTP measures joins and status polls through the whole
// HTTP handler (session signature, one Lua script that also spends the
// account's bucket, JSON). Neither path touches the database: sessions are
// stateless and settings live in Redis.
//
// The baselines, a raw ZADD NX and a raw ZRANK, run in the same process
// through the app's own Redis client (same pool, same options) with the same
// number of clients. Each sample runs the raw commands and the handler's
// calls interleaved in short rounds (see interleaveQueue) and reports the
// median of the rounds' paired ratios (join/zadd, status/zrank), so that a
// ratio compares runs a second apart, not minutes. The in-process figures
// call the handler without the loopback HTTP client and server (in
// production the Lambda adapter hands it requests): they are the ones the
// target is read against (tools/cmd/benchreport); join-http and status-http go
// through a net/http client and an httptest server, for information.
func BenchmarkQueueHTTP(b *testing.B) {
	a := apptest.New(b, 1)
	handler := a.Handler()
	srv := httptest.NewServer(handler)
	b.Cleanup(srv.Close)
	ctx := context.Background()
	const eventID, fans = 77, 20000
	now := time.Now()
	e := event.Event{ID: eventID, SaleStartsAt: now.Add(-time.Minute), Status: "on_sale",
		WaitingRoom: event.WaitingRoom{Enabled: true, Ceiling: 10, ActiveTTL: 600, AdmissionTTL: 900}}
	if _, err := a.Room.Publish(ctx, eventID, queue.SettingsOf(e, 3*time.Minute)); err != nil {
		b.Fatal(err)
	}
	if _, _, err := a.Room.Draw(ctx, eventID); err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, fans)
	for i := range tokens {
		tokens[i], _, _ = a.Sessions.Issue(token.Claims{Account: int64(i + 1)}, time.Hour)
	}
	path := fmt.Sprintf("/api/events/%d/queue", eventID)
	var fan atomic.Int64
	next := func() string { return tokens[fan.Add(1)%fans] }
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	overTCP := func(method string) error {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+next())
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	}
	// The requests handed to the handler are copies of one parsed per
	// method: building a request is the load generator's work (the Lambda
	// adapter's in production), which the raw baselines do not pay, so
	// parsing the URL anew for every call (http.NewRequest: a tenth of the
	// Go CPU of a join) would charge the handler for it.
	templates := map[string]*http.Request{}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		// The Lambda adapter (httpadapter.NewV2) builds every request with
		// a body, empty or not: bytes.NewReader gives http.NoBody, not nil.
		templates[method], _ = http.NewRequest(method, path, bytes.NewReader(nil))
	}
	call := func(handler http.Handler, method string) error {
		req := new(http.Request)
		*req = *templates[method]
		req.Header = http.Header{"Authorization": {"Bearer " + next()}}
		w := &discardWriter{header: http.Header{}}
		handler.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			return fmt.Errorf("status %d", w.status)
		}
		return nil
	}
	inProcess := func(method string) error { return call(handler, method) }
	// The baselines' sorted set sits in the room's slot, beside its line;
	// it starts with fans members for ZRANK to find, and every ZADD adds a
	// new one (added counts them across runs).
	rawKey := rediskey.Event(a.Config.RedisPrefix+"bench:", eventID) + "raw"
	b.Cleanup(func() { a.Redis.Del(ctx, rawKey) })
	seed := make([]redis.Z, fans)
	for i := range seed {
		seed[i] = redis.Z{Score: float64(i), Member: strconv.Itoa(i)}
	}
	if err := a.Redis.ZAdd(ctx, rawKey, seed...).Err(); err != nil {
		b.Fatal(err)
	}
	var added atomic.Int64
	added.Store(fans)
	variants := []loadstat.Variant{
		{Name: "zadd", Op: func(seq int) error {
			n := added.Add(1)
			return a.Redis.ZAddNX(ctx, rawKey, redis.Z{Score: float64(n), Member: strconv.FormatInt(n, 10)}).Err()
		}},
		{Name: "join", Op: func(seq int) error { return inProcess(http.MethodPost) }},
		{Name: "zrank", Op: func(seq int) error { return a.Redis.ZRank(ctx, rawKey, strconv.Itoa(seq%fans)).Err() }},
		{Name: "status", Op: func(seq int) error { return inProcess(http.MethodGet) }},
		{Name: "join-http", Op: func(seq int) error { return overTCP(http.MethodPost) }},
		{Name: "status-http", Op: func(seq int) error { return overTCP(http.MethodGet) }},
	}
	// alone/<variant> runs one variant by itself with 16 clients, for its
	// allocations, its CPU per request and a focused profile (-bench
	// 'QueueHTTP/alone/status$' -cpuprofile); make bench does not run it.
	for _, v := range variants {
		b.Run("alone/"+v.Name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := loadstat.StartCPU(ctx, nil)
			if res := loadstat.Run(16, b.N, v.Op); res.Errors > 0 {
				b.Fatalf("%d of %d requests failed", res.Errors, b.N)
			}
			b.ReportMetric(float64(cpu.Stop(ctx).Go.Microseconds())/float64(b.N), "go-cpu-µs/op")
		})
	}
	// handler-cpu/<join|status> times one call after another through a
	// handler whose Redis client replays, in process, the reply the first
	// real call of each script got (replayScripts): the Go work of a request
	// without its round trip, steady on a loaded machine where the CPU per
	// request above scatters by ±20 %. A diagnostic of the handler's own
	// cost, not a throughput: make bench does not run it.
	replaying := *a
	replaying.Room = queue.New(replayScripts(b, a.Config.Redis), a.Config.RedisPrefix)
	replayed := replaying.Handler()
	for _, m := range []struct{ name, method string }{{"join", http.MethodPost}, {"status", http.MethodGet}} {
		b.Run("handler-cpu/"+m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := call(replayed, m.method); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("interleaved/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				interleaveQueue(b, a.Redis, clients, variants,
					[2]string{"join", "zadd"}, [2]string{"status", "zrank"},
					[2]string{"join-http", "zadd"}, [2]string{"status-http", "zrank"})
			}
		})
	}
}

// interleaveQueue runs every variant queueRounds times for queueOps
// requests over clients, interleaved (loadstat.Interleave); besides
// throughput and latency it reports this process's and the Redis server's
// CPU per request ("go-cpu-µs/op": the load generator's share included;
// "redis-cpu-µs/op", INFO cpu: exact on the private Redis make bench
// starts, other tests' commands included on a shared one).
func interleaveQueue(b *testing.B, rdb redis.UniversalClient, clients int, variants []loadstat.Variant, pairs ...[2]string) {
	ctx := context.Background()
	loadstat.Interleave(b, queueRounds, variants, func(v loadstat.Variant) loadstat.Metrics {
		cpu, server := loadstat.StartCPU(ctx, nil), redisCPU(ctx, b, rdb)
		res := loadstat.Run(clients, queueOps, v.Op)
		goCPU, redisUsed := cpu.Stop(ctx).Go, redisCPU(ctx, b, rdb)-server
		if res.Errors > 0 {
			b.Fatalf("%s: %d of %d requests failed", v.Name, res.Errors, queueOps)
		}
		perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(res.Ops) }
		return loadstat.Metrics{"ops/s": res.PerSec, "p50-ms": loadstat.Ms(res.P50), "p99-ms": loadstat.Ms(res.P99),
			"go-cpu-µs/op": perOp(goCPU), "redis-cpu-µs/op": perOp(redisUsed)}
	}, pairs...)
}

// redisCPU is the CPU time the Redis server has spent (INFO cpu), summed
// over the primaries of a cluster.
func redisCPU(ctx context.Context, b *testing.B, rdb redis.UniversalClient) time.Duration {
	var mu sync.Mutex
	var total time.Duration
	add := func(ctx context.Context, node *redis.Client) error {
		info, err := node.Info(ctx, "cpu").Result()
		for _, l := range strings.Split(info, "\r\n") {
			name, v, _ := strings.Cut(l, ":")
			if name == "used_cpu_sys" || name == "used_cpu_user" {
				sec, _ := strconv.ParseFloat(v, 64)
				mu.Lock()
				total += time.Duration(sec * float64(time.Second))
				mu.Unlock()
			}
		}
		return err
	}
	var err error
	if c, ok := rdb.(*redis.ClusterClient); ok {
		err = c.ForEachMaster(ctx, add)
	} else {
		err = add(ctx, rdb.(*redis.Client))
	}
	if err != nil {
		b.Fatal(err)
	}
	return total
}

// replayScripts is a client of c's Redis, opened as the app's, that runs
// each script (EVALSHA) once and answers every later call of it with that
// first reply, without a round trip. Other commands go to the server.
func replayScripts(b *testing.B, cfg config.Redis) redis.UniversalClient {
	c := redisconn.Open(cfg)
	b.Cleanup(func() { c.Close() })
	c.AddHook(&replay{replies: map[string]any{}})
	return c
}

type replay struct {
	mu      sync.Mutex
	replies map[string]any // by script SHA
}

func (*replay) DialHook(next redis.DialHook) redis.DialHook { return next }

func (*replay) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *replay) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c, ok := cmd.(*redis.Cmd)
		if !ok || len(c.Args()) < 2 || c.Name() != "evalsha" {
			return next(ctx, cmd)
		}
		sha, _ := c.Args()[1].(string)
		h.mu.Lock()
		v, seen := h.replies[sha]
		h.mu.Unlock()
		if seen {
			c.SetVal(v)
			return nil
		}
		if err := next(ctx, cmd); err != nil {
			return err
		}
		h.mu.Lock()
		h.replies[sha] = c.Val()
		h.mu.Unlock()
		return nil
	}
}

// discardWriter is the cheapest ResponseWriter: it keeps the status only.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
