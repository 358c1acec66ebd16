package api

import (
	"net/http"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/token"
)

// AdmissionCookie carries the admission token for browsers.
const AdmissionCookie = "catraca_admission"

// Gate decides whether an account may buy for an event right now. The
// waiting room plugs in here; with the room off everyone may buy.
type Gate interface {
	Allow(r *http.Request, e event.Event, account int64) error
}

// TokenGate admits holders of a valid admission token for the event and
// account. It is a signature check with no lookup, so fans admitted before
// a Redis outage keep buying through it.
type TokenGate struct{ Signer *token.Signer }

// Allow implements Gate.
func (g TokenGate) Allow(r *http.Request, e event.Event, account int64) error {
	if !e.WaitingRoom.Enabled {
		return nil
	}
	for _, raw := range admissionCandidates(r) {
		c, err := g.Signer.Verify(raw)
		if err == nil && c.Event == e.ID && c.Account == account {
			return nil
		}
	}
	return problem.New(http.StatusForbidden, "admission-required",
		"This event has a waiting room: join the queue and buy once you are admitted.").
		With("queue", "/api/events/"+itoa(e.ID)+"/queue")
}

// admissionCandidates lists the tokens a request may carry as admission:
// the cookie, the bearer and the X-Admission-Token header.
func admissionCandidates(r *http.Request) []string {
	var out []string
	if c, err := r.Cookie(AdmissionCookie); err == nil && c.Value != "" {
		out = append(out, c.Value)
	}
	if b := bearer(r); b != "" {
		out = append(out, b)
	}
	if h := r.Header.Get("X-Admission-Token"); h != "" {
		out = append(out, h)
	}
	return out
}
