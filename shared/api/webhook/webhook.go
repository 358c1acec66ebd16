package webhook

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/psp"
)

// pspWebhook serves POST /api/psp/webhook: signed, de-duplicated by event
// id, applied in one transaction. A 5xx makes the PSP retry later.
func (s *Handlers) pspWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return problem.New(http.StatusRequestEntityTooLarge, "body-too-large", "The webhook body is too large.")
	}
	ev, err := s.Webhooks.Parse(r.Context(), body, r.Header.Get("Stripe-Signature"))
	switch {
	case errors.Is(err, psp.ErrBadSignature):
		return problem.New(http.StatusBadRequest, "bad-signature", "The Stripe-Signature header is missing, stale or wrong.")
	case err != nil || ev.ID == "":
		return problem.New(http.StatusBadRequest, "malformed-event", fmt.Sprintf("The webhook body is not a Stripe event of this API version (%v).", err))
	}
	if err := s.Orders.HandleEvent(r.Context(), ev); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
