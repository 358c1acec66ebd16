package console

// The body of a console refund (POST /api/orders/{id}/refund): which
// tickets, and why. A call without a body refunds the whole order, as it
// always did; a body must give a reason.

import (
	"errors"
	"net/http"

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/order"
	"github.com/catraca/catraca/shared/problem"
)

// refundBody is what an organizer asks back: tickets (none: the whole
// order), a reason from the box office's list and a free note.
type refundBody struct {
	Tickets []int64 `json:"tickets"`
	Reason  string  `json:"reason"`
	Note    string  `json:"note"`
}

// refundAsk reads a refund request's body, if it has one.
func refundAsk(r *http.Request, by int64) (order.RefundAsk, error) {
	ask := order.RefundAsk{By: by}
	var b refundBody
	if sent, err := web.DecodeOptional(r, &b); err != nil || !sent {
		return ask, err
	}
	if b.Reason == "" {
		return ask, problem.New(http.StatusBadRequest, "refund-reason-missing",
			"Say why this refund is given: reason is one of customer_request, duplicate_purchase, event_changed, fraud, other.").
			With("errors", []map[string]string{{"detail": "A reason is required.", "pointer": "/reason"}})
	}
	if b.Tickets != nil && len(b.Tickets) == 0 {
		return ask, problem.New(http.StatusBadRequest, "refund-tickets-empty",
			"Pick at least one ticket to refund, or leave tickets out to refund the whole order.")
	}
	ask.Tickets, ask.Reason, ask.Note = b.Tickets, b.Reason, b.Note
	return ask, nil
}

// partialRefundError is the problem of a refund refused for its tickets
// or its reason, or nil.
func partialRefundError(err error) error {
	switch {
	case errors.Is(err, order.ErrBadRefund):
		return web.Refused(err, http.StatusBadRequest, "invalid-refund")
	case errors.Is(err, order.ErrAlreadyRefunded):
		return web.Refused(err, http.StatusConflict, "already-refunded")
	case errors.Is(err, order.ErrRefundInFlight):
		return web.Refused(err, http.StatusConflict, "refund-in-flight")
	}
	return nil
}
