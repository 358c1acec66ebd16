package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/psp"
)

type checkoutResponse struct {
	Order      order.Order `json:"order"`
	PaymentURL string      `json:"payment_url,omitempty"`
	Queued     bool        `json:"queued"`
}

// checkout serves POST /api/orders/{id}/checkout.
func (s *Server) checkout(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.sessionAndID(r)
	if err != nil {
		return err
	}
	eventID, err := s.orders.EventOf(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	e, err := s.eventCache.Get(r.Context(), eventID)
	if err != nil {
		return err
	}
	address, _ := clientIP(r)
	o, queued, err := s.orders.Checkout(r.Context(), e, id, sess.Account, address)
	if tooMany := (*order.ErrTooManyDeclines)(nil); errors.As(err, &tooMany) {
		return declinesProblem(tooMany)
	}
	if err != nil {
		return err
	}
	res := checkoutResponse{Order: o, Queued: queued}
	status := http.StatusOK
	if queued {
		status = http.StatusAccepted
		w.Header().Set("Location", "/api/orders/"+itoa(id))
		w.Header().Set("Retry-After", "1")
	} else if o.Payment != nil {
		res.PaymentURL = o.Payment.URL
	}
	writeJSON(w, status, res)
	return nil
}

func (s *Server) getOrder(w http.ResponseWriter, r *http.Request) error {
	sess, id, err := s.sessionAndID(r)
	if err != nil {
		return err
	}
	o, err := s.orders.Get(r.Context(), id, sess.Account)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, o)
	return nil
}

func (s *Server) myOrders(w http.ResponseWriter, r *http.Request) error {
	sess, err := s.session(r)
	if err != nil {
		return err
	}
	orders, err := s.orders.Mine(r.Context(), sess.Account)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"orders": orders})
	return nil
}

// pspWebhook serves POST /api/psp/webhook: signed, de-duplicated by event
// id, applied in one transaction. A 5xx makes the PSP retry later.
func (s *Server) pspWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return problem.New(http.StatusRequestEntityTooLarge, "body-too-large", "The webhook body is too large.")
	}
	ev, err := s.webhooks.Parse(r.Context(), body, r.Header.Get("Stripe-Signature"))
	switch {
	case errors.Is(err, psp.ErrBadSignature):
		return problem.New(http.StatusBadRequest, "bad-signature", "The Stripe-Signature header is missing, stale or wrong.")
	case err != nil || ev.ID == "":
		return problem.New(http.StatusBadRequest, "malformed-event", fmt.Sprintf("The webhook body is not a Stripe event of this API version (%v).", err))
	}
	if err := s.orders.HandleEvent(r.Context(), ev); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
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

// orderError maps order sentinels to problems.
func orderError(err error) error {
	switch {
	case errors.Is(err, order.ErrNotFound):
		return problem.New(http.StatusNotFound, "order-not-found", "No such order.")
	case errors.Is(err, order.ErrNotPayable):
		return refused(err, http.StatusConflict, "order-not-payable")
	case errors.Is(err, order.ErrHoldExpired):
		return problem.New(http.StatusGone, "hold-expired", "Your hold expired and the seats were released. Pick seats again.")
	}
	return nil
}
