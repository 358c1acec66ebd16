package read

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/problem"
)

// A verified-fan presale's public side (docs/fairness.md): anyone reads
// the commitment and, after the draw, the seed and the registration ids.

// getPresale serves GET /api/events/{id}/presale: public, the
// commitment from the opening on, the seed once drawn.
func (s *Handlers) getPresale(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := web.PublicEvent(r.Context(), s.EventCache, id); err != nil {
		return err
	}
	// Every event page asks, and most events have no presale: that answer
	// is kept a second across instances (and 5 s by the CDN), so a crowd
	// on such an event's page reaches no database. A presale's own answer
	// carries live counts; the CDN's 5 s shields it.
	// The request whose build read the presale answers with that read.
	var v presale.Public
	built := false
	none, err := s.ReadCache.Get(r.Context(), "presale-none:"+web.Itoa(id), time.Second, func(ctx context.Context) ([]byte, error) {
		p, err := s.Presale.Public(ctx, id)
		if errors.Is(err, presale.ErrNotFound) {
			return []byte("1"), nil
		}
		v, built = p, err == nil
		return []byte("0"), err
	})
	if err != nil {
		return err
	}
	if string(none) == "1" {
		return problem.New(http.StatusNotFound, "presale-not-found", "This event has no verified-fan presale.").CacheFor(presaleMaxAge)
	}
	if !built {
		if v, err = s.Presale.Public(r.Context(), id); err != nil {
			return err
		}
	}
	w.Header().Set("Cache-Control", "public, max-age=5")
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

// presaleMaxAge is how long a CDN keeps an event's presale answer.
const presaleMaxAge = 5 * time.Second

// presaleIDs serves GET /api/events/{id}/presale/registrations: the
// sorted registration ids, one a line, the file the draw command reads.
func (s *Handlers) presaleIDs(w http.ResponseWriter, r *http.Request) error {
	id, err := web.PathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := web.PublicEvent(r.Context(), s.EventCache, id); err != nil {
		return err
	}
	ids, err := s.Presale.RegistrationIDs(r.Context(), id)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=60")
	var b strings.Builder
	for _, x := range ids {
		b.WriteString(x)
		b.WriteByte('\n')
	}
	_, err = w.Write([]byte(b.String()))
	return err
}
