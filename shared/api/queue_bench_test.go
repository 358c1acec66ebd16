package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/dev/apptest"
	"github.com/catraca/catraca/shared/dev/loadstat"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/rediskey"
	"github.com/catraca/catraca/shared/token"
)

// BenchmarkQueueHTTP measures joins and status polls through the whole
// HTTP handler (session signature, one Lua script that also spends the
// account's bucket, JSON). Neither path touches the database: sessions are
// stateless and settings live in Redis.
//
// The baselines, a raw ZADD NX and a raw ZRANK, run in the same process
// through the app's own Redis client (same pool, same options) with the same
// number of clients, each just before the figure it is read against. Every
// run also reports this process's CPU per request (go-cpu-µs/op): the load
// generator's share included, the HTTP client for the handler's figures;
// and the Redis server's (redis-cpu-µs/op, INFO cpu: exact on the private
// Redis make bench starts, other tests' commands included on a shared one).
// The in-process figures call the handler without the loopback HTTP
// client and server (in production the Lambda adapter hands it requests):
// they are the ones the target is read against (infra/benchreport).
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
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	overTCP := func(method string, seq int) error {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tokens[seq%fans])
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
	inProcess := func(method string, seq int) error {
		req, _ := http.NewRequest(method, path, nil)
		req.Header.Set("Authorization", "Bearer "+tokens[seq%fans])
		w := &discardWriter{header: http.Header{}}
		handler.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			return fmt.Errorf("status %d", w.status)
		}
		return nil
	}
	// The baselines' sorted set sits in the room's slot, beside its line.
	rawKey := rediskey.Event(a.Config.RedisPrefix+"bench:", eventID) + "raw"
	b.Cleanup(func() { a.Redis.Del(ctx, rawKey) })
	round := 0
	run := func(name string, clients int, op func(seq int) error) {
		b.Run(fmt.Sprintf("%s/clients=%d", name, clients), func(b *testing.B) {
			for range b.N {
				cpu, server := loadstat.StartCPU(ctx, nil), redisCPU(ctx, b, a.Redis)
				loadstat.Report(b, loadstat.Run(clients, fans, op), "ops")
				b.ReportMetric(float64(cpu.Stop(ctx).Go.Microseconds())/fans, "go-cpu-µs/op")
				b.ReportMetric(float64((redisCPU(ctx, b, a.Redis)-server).Microseconds())/fans, "redis-cpu-µs/op")
			}
		})
	}
	for _, clients := range []int{16, 64} {
		run("raw-zadd", clients, func(seq int) error {
			if seq == 0 {
				round++
			}
			return a.Redis.ZAddNX(ctx, rawKey, redis.Z{Score: float64(seq), Member: strconv.Itoa(round*fans + seq)}).Err()
		})
		run("join", clients, func(seq int) error { return overTCP(http.MethodPost, seq) })
		run("join-in-process", clients, func(seq int) error { return inProcess(http.MethodPost, seq) })
		run("raw-zrank", clients, func(seq int) error {
			return a.Redis.ZRank(ctx, rawKey, strconv.Itoa(fans+seq)).Err()
		})
		run("status", clients, func(seq int) error { return overTCP(http.MethodGet, seq) })
		run("status-in-process", clients, func(seq int) error { return inProcess(http.MethodGet, seq) })
	}
}

// redisCPU is the CPU time the Redis server has spent (INFO cpu).
func redisCPU(ctx context.Context, b *testing.B, rdb redis.UniversalClient) time.Duration {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, l := range strings.Split(info, "\r\n") {
		name, v, _ := strings.Cut(l, ":")
		if name == "used_cpu_sys" || name == "used_cpu_user" {
			sec, _ := strconv.ParseFloat(v, 64)
			total += time.Duration(sec * float64(time.Second))
		}
	}
	return total
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
