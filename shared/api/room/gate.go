package room

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/api/sale"
	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/token"
)

// admissionCookies prefixes the cookies carrying admission tokens for
// browsers: one per event (catraca_admission_<id>), so a browser admitted
// to two rooms keeps both. Path=/, since the edge gates the booking page
// (/events/<id>/book) as well as the holds (/api/events/<id>/holds).
const admissionCookies = "catraca_admission"

// AdmissionCookie names the cookie of an event's admission token.
func AdmissionCookie(eventID int64) string { return admissionCookies + "_" + web.Itoa(eventID) }

// Holds per account and event: a burst for seat collisions, then one every
// two seconds, so one fan's slow best-available searches cannot weigh on
// the hold latency that sets everyone's adaptive ceiling.
const (
	holdBurst  = 10
	holdRefill = 0.5 // per second
	// holdCheckTimeout bounds what a hung Redis adds to a hold.
	holdCheckTimeout = 300 * time.Millisecond
)

// TokenGate admits, in waiting-room events, holders of a valid admission
// token for the event and account whose turn (the shopping slot it was
// issued for) is still open, and rate-limits every account's holds. The
// signature is checked first, with no lookup; then one Redis script checks
// the turn and spends from the bucket. Without Redis (unreachable, or
// slower than holdCheckTimeout) it fails open for valid tokens: the
// controller admits nobody meanwhile, and a token never outlives its slot.
type TokenGate struct {
	Signer *token.Signer
	Room   *queue.Room
}

// Allow implements sale.Gate.
func (g TokenGate) Allow(r *http.Request, e event.Event, account int64) error {
	var adm queue.Admission
	// The sale's state comes before the admission it needs: a closed
	// sale's fan is told so, not sent to a line that admits nobody. A
	// retried hold of a closed sale is still answered (the inventory
	// replays it) when it carries its admission.
	closed := !e.OnSale(time.Now())
	if e.WaitingRoom.Enabled {
		if adm = g.admission(r, e, account); adm.Turn == 0 {
			if closed {
				return sale.InventoryError(inventory.ErrSalesClosed)
			}
			return problem.New(http.StatusForbidden, "admission-required",
				"This event has a waiting room: join the queue and buy once you are admitted.").
				With("queue", "/api/events/"+web.Itoa(e.ID)+"/queue")
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), holdCheckTimeout)
	defer cancel()
	wait, err := g.Room.CheckHold(ctx, e.ID, account, adm, holdBurst, holdRefill)
	var presale *queue.PresaleOnly
	switch {
	case errors.As(err, &presale):
		return presaleOnly(e.ID, presale.Until)
	case errors.Is(err, queue.ErrTurnOver) && closed:
		return sale.InventoryError(inventory.ErrSalesClosed)
	case errors.Is(err, queue.ErrTurnOver):
		return problem.New(http.StatusForbidden, "admission-required",
			"Your shopping turn has ended (you left the waiting room, bought, or your time ran out). Join the queue again for a new turn.").
			With("queue", "/api/events/"+web.Itoa(e.ID)+"/queue")
	case err != nil:
		return nil // Redis unreachable: fail open, see TokenGate
	case wait > 0:
		return problem.New(http.StatusTooManyRequests, "slow-down",
			"Too many hold attempts in a short time. Wait a moment, then try again; seats you already hold are kept.").RetryIn(wait)
	}
	return nil
}

// admission returns the newest valid admission token the request carries
// for the event and account (a zero Turn if none).
func (g TokenGate) admission(r *http.Request, e event.Event, account int64) queue.Admission {
	var adm queue.Admission
	for _, raw := range admissionCandidates(r, e.ID) {
		c, err := g.Signer.Verify(raw)
		if err == nil && c.Event == e.ID && c.Account == account && c.Turn > adm.Turn {
			adm = queue.Admission{Turn: c.Turn, Expires: c.Expires}
		}
	}
	return adm
}

// admissionCandidates lists the tokens a request may carry as admission:
// the event's cookie, the bearer and the X-Admission-Token header.
func admissionCandidates(r *http.Request, eventID int64) []string {
	var out []string
	if c, err := r.Cookie(AdmissionCookie(eventID)); err == nil && c.Value != "" {
		out = append(out, c.Value)
	}
	if b := web.BearerToken(r); b != "" {
		out = append(out, b)
	}
	if h := r.Header.Get("X-Admission-Token"); h != "" {
		out = append(out, h)
	}
	return out
}
