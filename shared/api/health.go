package api

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"
)

type healthCheck struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Ms    int64  `json:"ms"`
}

// health pings the catalog, every shard and Redis in parallel.
func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := map[string]func(context.Context) error{
		"catalog": s.catalog.Ping,
		"redis":   func(ctx context.Context) error { return s.redis.Ping(ctx).Err() },
	}
	for _, id := range s.shards.IDs() {
		pool, _ := s.shards.Pool(id)
		checks["shard-"+strconv.Itoa(id)] = pool.Ping
	}
	results := make([]healthCheck, 0, len(checks))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, check := range checks {
		wg.Go(func() {
			start := time.Now()
			err := check(ctx)
			c := healthCheck{Name: name, OK: err == nil, Ms: time.Since(start).Milliseconds()}
			if err != nil {
				// The driver's words (hosts, users, databases) stay in the log.
				s.log.Warn("health check failed", "check", name, "err", err)
				c.Error = "unreachable"
			}
			mu.Lock()
			results = append(results, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	status := http.StatusOK
	for _, c := range results {
		if !c.OK {
			status = http.StatusServiceUnavailable
		}
	}
	body := map[string]any{"ok": status == http.StatusOK, "checks": results}
	// Messages set aside need an operator, not another instance: counted,
	// they leave the status alone.
	if status == http.StatusOK && s.orders != nil {
		if n, err := s.orders.DeadMessages(ctx); err != nil {
			s.log.Warn("health: count dead outbox messages", "err", err)
		} else {
			body["outbox_dead"] = n
		}
	}
	writeJSON(w, status, body)
	return nil
}
