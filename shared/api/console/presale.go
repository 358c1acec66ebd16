package console

import (
	"net/http"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/presale"
)

// The organizer's side of a verified-fan presale (docs/fairness.md):
// opening the registration and running the draw. Fans register and
// redeem in the room group; the public answer is the read path's.

// openPresale serves PUT /api/events/{id}/presale: the organizer opens
// the registration; the answer carries the seed's commitment.
func (s *Handlers) openPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return err
	}
	e, err := s.Organizer.Event(r.Context(), sess.Account, id)
	if err != nil {
		return err
	}
	var spec presale.Spec
	if err := web.Decode(r, &spec); err != nil {
		return err
	}
	v, err := s.Presale.Open(r.Context(), e, sess.Account, spec)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, v)
	return nil
}

// drawPresale serves POST /api/events/{id}/presale/draw: the organizer
// runs the draw once the registration has closed (the sweep runs it
// otherwise). Drawing again answers the same result.
func (s *Handlers) drawPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return err
	}
	if _, err := s.Organizer.Event(r.Context(), sess.Account, id); err != nil {
		return err
	}
	v, err := s.Presale.Draw(r.Context(), id)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}
