package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/gateway"
)

// edgeCache stands in for CloudFront's progress behavior: the gateway's
// cache (Cache-Control honoured, concurrent misses collapsed).
func edgeCache(origin http.Handler) http.Handler {
	c := gateway.NewCache()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/queue/progress") {
			origin.ServeHTTP(w, r)
			return
		}
		c.Serve(w, r, r.URL.String(), 0, 2*time.Second, time.Second, origin)
	})
}

// BenchmarkWaitingRoomOrigin has 1,000 fans wait in line for 100 s, each
// polling as the server tells it (shared progress every 2 s through the
// edge cache, own status about every 75 s), and counts what reaches the
// origin per waiting fan per minute (the join itself not included).
func BenchmarkWaitingRoomOrigin(b *testing.B) {
	const fans, duration = 1000, 100 * time.Second
	for range b.N {
		a := apptest.New(b, 1)
		ctx := context.Background()
		const eventID = 99
		e := event.Event{ID: eventID, SaleStartsAt: time.Now().Add(-time.Minute), Status: "on_sale",
			WaitingRoom: event.WaitingRoom{Enabled: true, Ceiling: 10, ActiveTTL: 600, AdmissionTTL: 900}}
		if _, err := a.Room.Publish(ctx, eventID, queue.SettingsOf(e, 3*time.Minute)); err != nil {
			b.Fatal(err)
		}
		a.Room.Draw(ctx, eventID)
		var origin atomic.Int64
		handler := a.Handler()
		counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				origin.Add(1)
			}
			handler.ServeHTTP(w, r)
		})
		srv := httptest.NewServer(edgeCache(counted))
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
		get := func(method, path, tok string) map[string]any {
			req, _ := http.NewRequest(method, srv.URL+path, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			res, err := client.Do(req)
			if err != nil {
				return nil
			}
			defer res.Body.Close()
			var m map[string]any
			b, _ := io.ReadAll(res.Body)
			json.Unmarshal(b, &m)
			return m
		}
		deadline := time.Now().Add(duration)
		var wg sync.WaitGroup
		for i := range fans {
			wg.Go(func() {
				tok, _, _ := a.Sessions.Issue(token.Claims{Account: int64(i + 1)}, time.Hour)
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Millisecond)
				joined := get(http.MethodPost, fmt.Sprintf("/api/events/%d/queue", eventID), tok)
				hints, _ := joined["poll"].(map[string]any)
				if hints == nil {
					b.Error("join failed")
					return
				}
				progressEvery := time.Duration(hints["progress_every_ms"].(float64)) * time.Millisecond
				statusEvery := time.Duration(hints["status_every_ms"].(float64)) * time.Millisecond
				nextStatus := time.Now().Add(statusEvery)
				for time.Now().Before(deadline) {
					time.Sleep(progressEvery)
					get(http.MethodGet, hints["progress_url"].(string), tok)
					if time.Now().After(nextStatus) {
						st := get(http.MethodGet, hints["status_url"].(string), tok)
						if p, ok := st["poll"].(map[string]any); ok {
							statusEvery = time.Duration(p["status_every_ms"].(float64)) * time.Millisecond
						}
						nextStatus = time.Now().Add(statusEvery)
					}
				}
			})
		}
		wg.Wait()
		srv.Close()
		b.ReportMetric(float64(origin.Load())/fans/duration.Minutes(), "origin-req/fan/min")
	}
}
