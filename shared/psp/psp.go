// Package psp is the port to the payment service provider: a small
// interface (create, get and cancel a payment, refund, recent events), its
// Stripe-style HTTP client, and webhook signatures
// (PSP-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">).
package psp

import (
	"context"
	"errors"
	"time"
)

// Payment statuses, in the order they can move.
const (
	StatusRequiresPayment = "requires_payment_method"
	StatusProcessing      = "processing"
	StatusSucceeded       = "succeeded"
	StatusFailed          = "failed"
	StatusCanceled        = "canceled" // cancelled by the shop before it was paid
)

// Event types delivered by webhook and listed for reconciliation.
const (
	EventSucceeded  = "payment.succeeded"
	EventFailed     = "payment.failed"
	EventProcessing = "payment.processing"
	EventCanceled   = "payment.canceled"
	// EventRefunded follows a refund, ours or one made at the PSP (its
	// dashboard); EventDisputed a chargeback: the money went back either way.
	EventRefunded = "refund.succeeded"
	EventDisputed = "dispute.created"
)

// Errors a caller can act on.
var (
	ErrRateLimited = errors.New("psp rate limit")
	ErrUnavailable = errors.New("psp unavailable")
	ErrRejected    = errors.New("psp rejected the request")
)

// CreatePayment asks for a payment page for an order.
type CreatePayment struct {
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	OrderID   int64  `json:"order_id"`
	Reference string `json:"reference"` // our payment row's idempotency key
	ReturnURL string `json:"return_url"`
}

// Payment is the PSP's view of a payment.
type Payment struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Amount    int64     `json:"amount"`
	Currency  string    `json:"currency"`
	OrderID   int64     `json:"order_id"`
	Reference string    `json:"reference"`
	URL       string    `json:"url"`
	Failure   string    `json:"failure,omitempty"`
	Refunded  bool      `json:"refunded"`
	Disputed  bool      `json:"disputed,omitempty"`
	Created   time.Time `json:"created"`
	ReturnURL string    `json:"return_url,omitempty"`
}

// Refund is a refund of a payment.
type Refund struct {
	ID      string `json:"id"`
	Payment string `json:"payment"`
	Amount  int64  `json:"amount"`
	Status  string `json:"status"`
}

// Event is one PSP notification.
type Event struct {
	ID      string    `json:"id"`
	Type    string    `json:"type"`
	Created time.Time `json:"created"`
	Payment Payment   `json:"payment"`
}

// PSP is what catraca needs from a payment provider.
type PSP interface {
	CreatePayment(ctx context.Context, p CreatePayment, idempotencyKey string) (Payment, error)
	GetPayment(ctx context.Context, id string) (Payment, error)
	// CancelPayment stops a payment that is not paid yet (Stripe: cancel
	// the PaymentIntent); a paid or processing one is ErrRejected.
	CancelPayment(ctx context.Context, id, idempotencyKey string) (Payment, error)
	Refund(ctx context.Context, paymentID string, amount int64, idempotencyKey string) (Refund, error)
	Events(ctx context.Context, since time.Time) ([]Event, error)
}
