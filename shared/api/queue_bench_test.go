package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/catraca/catraca/shared/dev/apptest"
	"github.com/catraca/catraca/shared/dev/loadstat"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
)

// BenchmarkQueueHTTP measures joins and status polls through the whole
// HTTP handler (session signature, one Lua script that also spends the
// account's bucket, JSON). Neither path touches the database: sessions are
// stateless and settings live in Redis.
func BenchmarkQueueHTTP(b *testing.B) {
	a := apptest.New(b, 1)
	srv := httptest.NewServer(a.Handler())
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
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	call := func(method string, seq int) error {
		req, _ := http.NewRequest(method, fmt.Sprintf("%s/api/events/%d/queue", srv.URL, eventID), nil)
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
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("join/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				loadstat.Report(b, loadstat.Run(clients, fans, func(seq int) error { return call(http.MethodPost, seq) }), "ops")
			}
		})
		b.Run(fmt.Sprintf("status/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				loadstat.Report(b, loadstat.Run(clients, fans, func(seq int) error { return call(http.MethodGet, seq) }), "ops")
			}
		})
	}
}
