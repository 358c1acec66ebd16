package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/problem"
)

// presaleRoutes are the verified-fan presale's (docs/fairness.md): the
// organizer opens a registration and may run the draw, anyone reads the
// commitment and, after the draw, the seed and the registration ids, and
// a fan registers, reads their own state and redeems a won code.
func (s *Server) presaleRoutes() {
	s.route("PUT /api/events/{id}/presale", s.openPresale)
	s.route("GET /api/events/{id}/presale", s.getPresale)
	s.route("GET /api/events/{id}/presale/registrations", s.presaleIDs)
	s.route("POST /api/events/{id}/presale/draw", s.drawPresale)
	s.route("GET /api/events/{id}/presale/registration", s.myPresale)
	s.route("POST /api/events/{id}/presale/registration", s.registerPresale)
	s.route("POST /api/events/{id}/presale/code", s.redeemPresale)
}

// openPresale serves PUT /api/events/{id}/presale: the organizer opens
// the registration; the answer carries the seed's commitment.
func (s *Server) openPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return err
	}
	e, err := s.organizer.Event(r.Context(), sess.Account, id)
	if err != nil {
		return err
	}
	var spec presale.Spec
	if err := decode(r, &spec); err != nil {
		return err
	}
	v, err := s.presale.Open(r.Context(), e, sess.Account, spec)
	if err != nil {
		return presaleError(err)
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// drawPresale serves POST /api/events/{id}/presale/draw: the organizer
// runs the draw once the registration has closed (the sweep runs it
// otherwise). Drawing again answers the same result.
func (s *Server) drawPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.organizerAndID(r)
	if err != nil {
		return err
	}
	if _, err := s.organizer.Event(r.Context(), sess.Account, id); err != nil {
		return err
	}
	v, err := s.presale.Draw(r.Context(), id)
	if err != nil {
		return presaleError(err)
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// getPresale serves GET /api/events/{id}/presale: public, the
// commitment from the opening on, the seed once drawn.
func (s *Server) getPresale(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.publicEvent(r.Context(), id); err != nil {
		return err
	}
	// Every event page asks, and most events have no presale: that answer
	// is kept a second across instances (and 5 s by the CDN), so a crowd
	// on such an event's page reaches no database. A presale's own answer
	// carries live counts; the CDN's 5 s shields it.
	// The request whose build read the presale answers with that read.
	var v presale.Public
	built := false
	none, err := s.readCache.Get(r.Context(), "presale-none:"+itoa(id), time.Second, func(ctx context.Context) ([]byte, error) {
		p, err := s.presale.Public(ctx, id)
		if errors.Is(err, presale.ErrNotFound) {
			return []byte("1"), nil
		}
		v, built = p, err == nil
		return []byte("0"), err
	})
	if err != nil {
		return presaleError(err)
	}
	if string(none) == "1" {
		return problem.New(http.StatusNotFound, "presale-not-found", "This event has no verified-fan presale.").CacheFor(presaleMaxAge)
	}
	if !built {
		if v, err = s.presale.Public(r.Context(), id); err != nil {
			return presaleError(err)
		}
	}
	w.Header().Set("Cache-Control", "public, max-age=5")
	writeJSON(w, http.StatusOK, v)
	return nil
}

// presaleMaxAge is how long a CDN keeps an event's presale answer.
const presaleMaxAge = 5 * time.Second

// presaleIDs serves GET /api/events/{id}/presale/registrations: the
// sorted registration ids, one a line, the file the draw command reads.
func (s *Server) presaleIDs(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if _, err := s.publicEvent(r.Context(), id); err != nil {
		return err
	}
	ids, err := s.presale.RegistrationIDs(r.Context(), id)
	if err != nil {
		return presaleError(err)
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

// myPresale serves GET /api/events/{id}/presale/registration: the fan's
// own state (not registered, registered, won with the code, not drawn).
func (s *Server) myPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.sessionAndID(r)
	if err != nil {
		return err
	}
	if _, err := s.publicEvent(r.Context(), id); err != nil {
		return err
	}
	v, err := s.presale.MineOf(r.Context(), id, sess.Account)
	if err != nil {
		return presaleError(err)
	}
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w, http.StatusOK, v)
	return nil
}

// registerPresale serves POST /api/events/{id}/presale/registration.
func (s *Server) registerPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.sessionAndID(r)
	if err != nil {
		return err
	}
	if _, err := s.publicEvent(r.Context(), id); err != nil {
		return err
	}
	v, err := s.presale.Register(r.Context(), id, sess.Account)
	if err != nil {
		return presaleError(err)
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// redeemPresale serves POST /api/events/{id}/presale/code {code}: the
// winner's account spends its code and may then join the room.
func (s *Server) redeemPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.sessionAndID(r)
	if err != nil {
		return err
	}
	if _, err := s.publicEvent(r.Context(), id); err != nil {
		return err
	}
	var body struct {
		Code string `json:"code"`
	}
	if err := decode(r, &body); err != nil {
		return err
	}
	if strings.TrimSpace(body.Code) == "" {
		return problem.New(http.StatusBadRequest, "invalid-presale-code", "Send the presale code: {\"code\": \"XXXX-XXXX-XXXX\"}.")
	}
	v, err := s.presale.Redeem(r.Context(), id, sess.Account, body.Code)
	if err != nil {
		return presaleError(err)
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// presaleError maps the presale's refusals.
func presaleError(err error) error {
	for _, m := range []struct {
		kind   error
		status int
		code   string
	}{
		{presale.ErrNotFound, http.StatusNotFound, "presale-not-found"},
		{presale.ErrInvalid, http.StatusBadRequest, "invalid-presale"},
		{presale.ErrExists, http.StatusConflict, "presale-exists"},
		{presale.ErrWindow, http.StatusConflict, "registration-closed"},
		{presale.ErrAlreadyRegistered, http.StatusConflict, "already-registered"},
		{presale.ErrTooEarly, http.StatusConflict, "registration-open"},
		{presale.ErrBadCode, http.StatusUnprocessableEntity, "invalid-presale-code"},
		{presale.ErrNotYourCode, http.StatusForbidden, "presale-code-not-yours"},
		{presale.ErrOver, http.StatusConflict, "presale-over"},
	} {
		if errors.Is(err, m.kind) {
			return refused(err, m.status, m.code)
		}
	}
	return err
}

// presaleOnly refuses a join during the presale from an account that
// redeemed no code.
func presaleOnly(id int64, until time.Time) error {
	return problem.New(http.StatusForbidden, "presale-code-required",
		"Until "+until.UTC().Format(time.RFC3339)+" this waiting room admits presale code holders only: enter the code you won on the event's presale page. "+
			"Everyone may join from then on.").With("presale", "/api/events/"+itoa(id)+"/presale").With("opens_at", until.UTC())
}
