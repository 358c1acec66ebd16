package read

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/problem"
)

func (s *Handlers) listEvents(w http.ResponseWriter, r *http.Request) error {
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
	if f.From, err = web.QueryTime(r, "from"); err != nil {
		return err
	}
	if f.To, err = web.QueryTime(r, "to"); err != nil {
		return err
	}
	if f.Limit, err = web.QueryLimit(r, 0, 100, ""); err != nil {
		return err
	}
	// Every distinct query is cached for a few seconds fleet-wide; the key
	// is the parsed filter, so tracking parameters do not split it.
	key, _ := json.Marshal(f)
	b, err := s.ReadCache.Get(r.Context(), "events:"+string(key), 5*time.Second, func(ctx context.Context) ([]byte, error) {
		page, err := s.Events.List(ctx, f)
		if err != nil {
			return nil, err
		}
		return json.Marshal(page)
	})
	if err != nil {
		return err
	}
	s.cached.Write(w, r, b, web.ETag(web.Hash(b)), cacheListing)
	return nil
}

func (s *Handlers) getEvent(w http.ResponseWriter, r *http.Request) error {
	e, err := web.PathEvent(r, s.EventCache)
	if err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	s.cached.Write(w, r, b, web.ETag(web.Hash(b)), cacheFor(e, cacheListing))
	return nil
}
