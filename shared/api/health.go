package api

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/catraca/catraca/shared/api/web"
)

type healthCheck struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Ms    int64  `json:"ms"`
}

// Ops serve the operators' routes: the health check and the API's
// OpenAPI document.
type Ops struct {
	// Checks are the named probes of /healthz (the catalog, each shard,
	// Redis), built by the wiring.
	Checks map[string]func(context.Context) error
	// Outbox counts the messages set aside for an operator (nil: none).
	Outbox interface {
		DeadMessages(ctx context.Context) (int, error)
	}
	Log    *slog.Logger
	cached web.Cached
}

// Mount registers the routes on m.
func (s *Ops) Mount(m *web.Mux) {
	m.Route("GET /healthz", s.health)
	m.Route("GET /api/openapi.json", s.openAPI)
}

// health runs every check in parallel.
func (s *Ops) health(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	checks := s.Checks
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
				s.Log.Warn("health check failed", "check", name, "err", err)
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
	if status == http.StatusOK && s.Outbox != nil {
		if n, err := s.Outbox.DeadMessages(ctx); err != nil {
			s.Log.Warn("health: count dead outbox messages", "err", err)
		} else {
			body["outbox_dead"] = n
		}
	}
	web.WriteJSON(w, status, body)
	return nil
}
