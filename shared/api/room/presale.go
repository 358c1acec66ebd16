package room

import (
	"errors"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/presale"
	"github.com/catraca/catraca/shared/problem"
)

// A fan's side of a verified-fan presale (docs/fairness.md): registering,
// reading their own state, and redeeming a won code, which lets them join
// the room while it admits code holders only. The organizer opens and
// draws it in the console; the read path serves its public answer.

// myPresale serves GET /api/events/{id}/presale/registration: the fan's
// own state (not registered, registered, won with the code, not drawn).
func (s *Handlers) myPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	if _, err := web.PublicEvent(r.Context(), s.EventCache, id); err != nil {
		return err
	}
	v, err := s.Presale.MineOf(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "private, no-store")
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

// registerPresale serves POST /api/events/{id}/presale/registration.
func (s *Handlers) registerPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	if _, err := web.PublicEvent(r.Context(), s.EventCache, id); err != nil {
		return err
	}
	v, err := s.Presale.Register(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, v)
	return nil
}

// redeemPresale serves POST /api/events/{id}/presale/code {code}: the
// winner's account spends its code and may then join the room.
func (s *Handlers) redeemPresale(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	if _, err := web.PublicEvent(r.Context(), s.EventCache, id); err != nil {
		return err
	}
	var body struct {
		Code string `json:"code"`
	}
	if err := web.Decode(r, &body); err != nil {
		return err
	}
	if presale.NormalizeCode(body.Code) == "" {
		return problem.New(http.StatusBadRequest, "invalid-presale-code", "Send the presale code: {\"code\": \"XXXX-XXXX-XXXX\"}.")
	}
	v, err := s.Presale.Redeem(r.Context(), id, sess.Account, body.Code)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

// PresaleError maps the presale's refusals, whichever group's call met
// them (the router's translate asks it), or returns nil.
func PresaleError(err error) error {
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
		{presale.ErrEventConflict, http.StatusConflict, "presale-conflict"},
	} {
		if errors.Is(err, m.kind) {
			return web.Refused(err, m.status, m.code)
		}
	}
	return nil
}

// presaleOnly refuses a join during the presale from an account that
// redeemed no code.
func presaleOnly(id int64, until time.Time) error {
	return problem.New(http.StatusForbidden, "presale-code-required",
		"Until "+until.UTC().Format(time.RFC3339)+" this waiting room admits presale code holders only: enter the code you won on the event's presale page. "+
			"Everyone may join from then on.").With("presale", "/api/events/"+web.Itoa(id)+"/presale").With("opens_at", until.UTC())
}
