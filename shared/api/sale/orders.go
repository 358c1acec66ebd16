package sale

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/problem"
)

// CheckoutResponse answers a checkout: the order, and where to pay.
type CheckoutResponse struct {
	Order      order.Order `json:"order"`
	PaymentURL string      `json:"payment_url,omitempty"`
	Queued     bool        `json:"queued"`
}

// checkout serves POST /api/orders/{id}/checkout.
func (s *Handlers) checkout(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	eventID, err := s.Orders.EventOf(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	e, err := s.EventCache.Get(r.Context(), eventID)
	if err != nil {
		return err
	}
	address, _ := web.ClientIP(r)
	o, queued, err := s.Orders.Checkout(r.Context(), e, id, sess.Account, address)
	if tooMany := (*order.ErrTooManyDeclines)(nil); errors.As(err, &tooMany) {
		return declinesProblem(tooMany)
	}
	if err != nil {
		return err
	}
	res := CheckoutResponse{Order: o, Queued: queued}
	status := http.StatusOK
	if queued {
		status = http.StatusAccepted
		w.Header().Set("Location", "/api/orders/"+web.Itoa(id))
		w.Header().Set("Retry-After", "1")
	} else if o.Payment != nil {
		res.PaymentURL = o.Payment.URL
	}
	web.WriteJSON(w, status, res)
	return nil
}

func (s *Handlers) getOrder(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.Auth.SessionAndID(r)
	if err != nil {
		return err
	}
	o, err := s.Orders.Get(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, o)
	return nil
}

func (s *Handlers) myOrders(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.Auth.Session(r)
	if err != nil {
		return err
	}
	orders, err := s.Orders.Mine(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"orders": orders})
	return nil
}

// declinesProblem answers a checkout slowed or blocked after declined
// payments (card testing): why, and when to come back.
func declinesProblem(e *order.ErrTooManyDeclines) error {
	who := map[string]string{"account": "this account", "address": "your network address"}[e.Subject]
	wait := e.Wait.Round(time.Second)
	detail := fmt.Sprintf("The payment provider declined %d payments from %s recently. To protect card holders, checkout is paused: try again in %v.", e.Strikes, who, wait)
	if e.Blocked {
		detail = fmt.Sprintf("The payment provider declined %d payments from %s recently. To protect card holders, checkout is blocked for %v; if your card was declined by mistake, contact your bank before trying again.", e.Strikes, who, wait)
	}
	return problem.New(http.StatusTooManyRequests, "too-many-declines", detail).With("subject", e.Subject).With("blocked", e.Blocked).RetryIn(e.Wait).Wrap(e)
}

// OrderError maps order sentinels to problems.
func OrderError(err error) error {
	switch {
	case errors.Is(err, order.ErrNotFound):
		return problem.New(http.StatusNotFound, "order-not-found", "No such order.")
	case errors.Is(err, order.ErrNotPayable):
		return web.Refused(err, http.StatusConflict, "order-not-payable")
	case errors.Is(err, order.ErrHoldExpired):
		return problem.New(http.StatusGone, "hold-expired", "Your hold expired and the seats were released. Pick seats again.")
	}
	return nil
}
