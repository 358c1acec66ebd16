package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"

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
	o, queued, err := s.orders.Checkout(r.Context(), e, id, sess.Account)
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
	ev, err := psp.ParseWebhook(s.webhookSecrets, body, r.Header.Get("Stripe-Signature"))
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
