package api

import (
	"net/http"
	"strconv"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/problem"
)

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := event.Filter{City: q.Get("city"), Cursor: q.Get("cursor")}
	var err error
	if f.From, err = queryTime(r, "from"); err != nil {
		return err
	}
	if f.To, err = queryTime(r, "to"); err != nil {
		return err
	}
	if v := q.Get("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit < 1 || f.Limit > 100 {
			return problem.New(http.StatusBadRequest, "invalid-parameter", "Parameter limit must be between 1 and 100.")
		}
	}
	page, err := s.events.List(r.Context(), f)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=5, stale-while-revalidate=30")
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	e, err := s.events.Get(r.Context(), id)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "public, max-age=5, stale-while-revalidate=30")
	writeJSON(w, http.StatusOK, e)
	return nil
}
