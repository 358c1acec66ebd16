package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/problem"
)

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := event.Filter{Query: q.Get("q"), City: q.Get("city"), Category: q.Get("category"), Cursor: q.Get("cursor")}
	if v := q.Get("on_sale"); v != "" {
		var err error
		if f.OnSaleNow, err = strconv.ParseBool(v); err != nil {
			return problem.New(http.StatusBadRequest, "invalid-parameter", "Parameter on_sale must be true or false.")
		}
	}
	if v := q.Get("opens_soon"); v != "" {
		var err error
		if f.OpensSoon, err = strconv.ParseBool(v); err != nil {
			return problem.New(http.StatusBadRequest, "invalid-parameter", "Parameter opens_soon must be true or false.")
		}
	}
	var err error
	if f.From, err = queryTime(r, "from"); err != nil {
		return err
	}
	if f.To, err = queryTime(r, "to"); err != nil {
		return err
	}
	if f.Limit, err = queryLimit(r, 0, 100, ""); err != nil {
		return err
	}
	// Every distinct query is cached for a few seconds fleet-wide; the key
	// is the parsed filter, so tracking parameters do not split it.
	key, _ := json.Marshal(f)
	b, err := s.readCache.Get(r.Context(), "events:"+string(key), 5*time.Second, func(ctx context.Context) ([]byte, error) {
		page, err := s.events.List(ctx, f)
		if err != nil {
			return nil, err
		}
		return json.Marshal(page)
	})
	if err != nil {
		return err
	}
	s.writeCached(w, r, b, etagOf(hashOf(b)), cacheListing)
	return nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) error {
	e, err := s.pathEvent(r)
	if err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	s.writeCached(w, r, b, etagOf(hashOf(b)), cacheFor(e, cacheListing))
	return nil
}

func hashOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
