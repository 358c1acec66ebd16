// Package psp is the port to the payment service provider: a small
// interface (open a hosted payment page, read, cancel and refund a payment,
// list recent events, confirm an event against the provider's own records)
// and its adapter for Stripe (Checkout Sessions, PaymentIntents, refunds and
// signed webhook events), built on the official SDK. The local simulator
// (tools/pspsim) speaks the same wire format, so the same adapter runs
// in tests, in make dev and against Stripe.
package psp

import (
	"context"
	"errors"
	"time"
)

// Payment statuses, in the order they can move: our summary of a Checkout
// Session and its PaymentIntent.
const (
	StatusRequiresPayment = "requires_payment_method" // the page is open
	StatusRequiresAction  = "requires_action"         // the card holder is authenticating (3-D Secure)
	StatusProcessing      = "processing"              // an asynchronous payment (Pix, a bank) is on its way
	StatusSucceeded       = "succeeded"
	StatusFailed          = "failed"   // the last try was declined; the page still takes another card
	StatusCanceled        = "canceled" // expired by the shop (or by time) before it was paid
)

// Kind is what an event means to the shop; the provider's event types map
// onto these (docs/payments.md lists which). An empty Kind is an event the
// shop ignores.
type Kind string

// Event kinds.
const (
	KindSucceeded  Kind = "succeeded"
	KindProcessing Kind = "processing"
	KindFailed     Kind = "failed"
	KindCanceled   Kind = "canceled"
	// KindRefunded follows a refund, ours or one made at the PSP (its
	// dashboard); KindDisputed a chargeback: the money went back either way.
	KindRefunded Kind = "refunded"
	KindDisputed Kind = "disputed"
	// KindRefundFailed is a refund the PSP accepted (pending) that failed
	// later: the money was not given back.
	KindRefundFailed Kind = "refund_failed"
	// KindRefundSucceeded is a refund the PSP accepted (pending) that gave
	// the money back. A partial refund's charge.refunded does not say
	// which refund it follows, so this is what settles a pending partial
	// refund; a whole one is settled by charge.refunded as well.
	KindRefundSucceeded Kind = "refund_succeeded"
)

// Errors a caller can act on.
var (
	ErrRateLimited  = errors.New("psp rate limit")
	ErrUnavailable  = errors.New("psp unavailable")
	ErrRejected     = errors.New("psp rejected the request")
	ErrBadSignature = errors.New("bad webhook signature")
	ErrMalformed    = errors.New("webhook body is not an event")
)

// CreatePayment asks for a payment page for an order.
type CreatePayment struct {
	Amount    int64
	Currency  string
	OrderID   int64
	Reference string // our payment row's idempotency key
	ReturnURL string
	// PixWait is how long the hold can still wait for a Pix after its
	// payment page closes: a BRL page offers Pix when it is at least
	// PixMinWait, with a code that lives that long (so a code shown at
	// the page's last moment expires when the hold can wait no more).
	PixWait time.Duration
}

// PixMinWait is the shortest Pix code the shop offers: less is not enough
// time to pay from a bank app, so the page offers cards only.
const PixMinWait = time.Minute

// Payment is the PSP's view of one payment attempt. ID is the Checkout
// Session (what the shop records and expires); Intent is the PaymentIntent
// that moves the money (what a refund names), once there is one. A charge
// made outside any Checkout Session has only its PaymentIntent, which is
// then its ID too.
type Payment struct {
	ID        string
	Intent    string
	Status    string
	Amount    int64
	Currency  string
	OrderID   int64  // from the metadata: 0 when it names no order
	Reference string // from the metadata
	URL       string
	Failure   string
	Refunded  bool
	Disputed  bool
	Created   time.Time
	// ExpiresAt is when the code of a Pix in progress expires (the PSP
	// fails it then); zero for any other payment.
	ExpiresAt time.Time
	Card      string // the charge's card fingerprint: "" when not paid by card
}

// Refund is a refund of a payment: Status is the provider's (succeeded,
// pending, failed…), Failure its failure reason once failed.
type Refund struct {
	ID      string
	Payment string
	Amount  int64
	Status  string
	Failure string
}

// RefundFailed is a refund's status once it failed.
const RefundFailed = "failed"

// Event is one PSP notification. Payment is what the event's own object
// says, good enough to route it to the order's shard; what the shop acts on
// is what Confirm reads back from the provider.
type Event struct {
	ID      string
	Type    string // the provider's event type
	Kind    Kind
	Created time.Time
	Payment Payment
	// Refund is the refund a refund event is about (KindRefundFailed,
	// KindRefundSucceeded).
	Refund Refund
}

// PSP is what catraca needs from a payment provider. Each method is one API
// call (so the caller's quota counts them), except Confirm for a charge made
// outside Checkout, which is not ours anyway.
type PSP interface {
	// CreatePayment opens a hosted payment page for one attempt.
	CreatePayment(ctx context.Context, p CreatePayment, idempotencyKey string) (Payment, error)
	// GetPayment reads a payment by its ID (or PaymentIntent).
	GetPayment(ctx context.Context, id string) (Payment, error)
	// CancelPayment stops a payment that is not paid yet (Stripe: expire
	// the Checkout Session); a paid one is ErrRejected.
	CancelPayment(ctx context.Context, id, idempotencyKey string) (Payment, error)
	// Refund gives a whole payment back; intent is its Payment.Intent.
	Refund(ctx context.Context, intent string, amount int64, idempotencyKey string) (Refund, error)
	// Events lists one page of the events created since then, newest
	// first, after the event id given ("" for the first page); more says
	// whether another page may follow.
	Events(ctx context.Context, since time.Time, after string) (page []Event, more bool, err error)
	// Confirm reads an event's payment back from the provider: amount,
	// currency and our reference come from the PaymentIntent, never from
	// the event alone. The event may turn out to be one the shop ignores
	// (its Kind is then empty).
	Confirm(ctx context.Context, ev Event) (Event, error)
}
