package order

// The order's wire types: what the API answers of orders, payments,
// refunds and tickets, named here and not on the store's rows, and the
// one place rows become them. While a type has its row's fields, the
// conversion is Go's; when a row changes, it stops compiling here and
// becomes field by field, and no JSON name follows the column.

import (
	"time"

	"github.com/catraca/catraca/shared/inventory"
	"github.com/catraca/catraca/shared/shardstore"
)

// Order is what a fan sees of an order: its hold, items, tickets and
// payment attempt (the one that paid it, or the latest).
type Order struct {
	ID         int64                  `json:"id"`
	EventID    int64                  `json:"event_id"`
	Status     shardstore.OrderStatus `json:"status"`
	TotalCents int64                  `json:"total_cents"`
	Currency   string                 `json:"currency"`
	CreatedAt  time.Time              `json:"created_at"`
	PaidAt     *time.Time             `json:"paid_at,omitempty"`
	HoldID     int64                  `json:"hold_id"`
	HoldStatus shardstore.HoldStatus  `json:"hold_status"`
	ExpiresAt  time.Time              `json:"hold_expires_at"`
	Items      []inventory.Item       `json:"items"`
	Tickets    []Ticket               `json:"tickets"`
	Payment    *Payment               `json:"payment,omitempty"`
	UserID     int64                  `json:"-"`
	// RefundedCents is what the order's succeeded refunds gave back.
	RefundedCents int64 `json:"refunded_cents,omitempty"`
	// RefundingCents is what its pending refunds will give back.
	RefundingCents int64 `json:"-"`
}

// Payment is the attempt that paid an order, or its latest one.
type Payment struct {
	Status  shardstore.PaymentStatus `json:"status"`
	URL     string                   `json:"url,omitempty"`
	Failure string                   `json:"failure,omitempty"`
	Attempt int                      `json:"attempt"`
}

// Ticket is one admission; a void one (its order was refunded) admits no
// one. Its code is not here: codes rotate and are shown on the ticket page
// (shared/entry), only to the ticket's holder.
type Ticket struct {
	ID         int64  `json:"id"`
	Label      string `json:"label"`
	Void       bool   `json:"void,omitempty"`
	PriceCents int64  `json:"price_cents"`
}

// PaymentRecord is one payment attempt, as the organizer sees it.
type PaymentRecord struct {
	ID           int64                    `json:"id"`
	Attempt      int                      `json:"attempt"`
	Status       shardstore.PaymentStatus `json:"status"`
	AmountCents  int64                    `json:"amount_cents"`
	Currency     string                   `json:"currency"`
	PSPPaymentID string                   `json:"psp_payment_id,omitempty"`
	Failure      string                   `json:"failure,omitempty"`
	CreatedAt    time.Time                `json:"created_at"`
	UpdatedAt    time.Time                `json:"updated_at"`
}

// RefundRecord is one refund attempt, an organizer's (RequestedBy) or the
// outbox's (RequestedBy 0), and what the PSP said.
type RefundRecord struct {
	Status      shardstore.RefundStatus `json:"status"`
	RequestedBy int64                   `json:"requested_by"`
	Attempt     int                     `json:"attempt"`
	PSPRefundID string                  `json:"psp_refund_id,omitempty"`
	Failure     string                  `json:"failure,omitempty"`
	CreatedAt   time.Time               `json:"created_at"`
	AmountCents int64                   `json:"amount_cents,omitempty"`
	// Tickets are the tickets a partial refund gives back; none for the
	// whole order.
	Tickets []int64 `json:"tickets,omitempty"`
	Reason  string  `json:"reason,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// RefundFailure is an order whose latest refund attempt the PSP refused or
// never answered, and whose money is still owed (paid or refund_pending).
type RefundFailure struct {
	OrderID     int64                   `json:"order_id"`
	EventID     int64                   `json:"event_id"`
	UserID      int64                   `json:"-"`
	OrderStatus shardstore.OrderStatus  `json:"order_status"`
	AmountCents int64                   `json:"amount_cents"`
	Currency    string                  `json:"currency"`
	Status      shardstore.RefundStatus `json:"status"`
	Failure     string                  `json:"failure"`
	Attempt     int                     `json:"attempt"`
	FailedAt    time.Time               `json:"failed_at"`
}

// FailedRefund is a refund a cancellation asked that failed: the order
// (still paid), its buyer and amount, why, how many times it was asked
// and when it last failed.
type FailedRefund struct {
	OrderID     int64     `json:"order_id"`
	UserID      int64     `json:"-"`
	AmountCents int64     `json:"amount_cents"`
	Currency    string    `json:"currency"`
	Failure     string    `json:"failure"`
	Tries       int       `json:"tries"`
	FailedAt    time.Time `json:"failed_at"`
}

// orderOf converts an order's row, with its lines, tickets and payment.
func orderOf(o shardstore.Order) Order {
	out := Order{ID: o.ID, EventID: o.EventID, Status: o.Status, TotalCents: o.TotalCents, Currency: o.Currency,
		CreatedAt: o.CreatedAt, PaidAt: o.PaidAt, HoldID: o.HoldID, HoldStatus: o.HoldStatus, ExpiresAt: o.ExpiresAt,
		Items: inventory.Items(o.Items), Tickets: shardstore.Rows(o.Tickets, func(t shardstore.Ticket) Ticket { return Ticket(t) }),
		UserID: o.UserID, RefundedCents: o.RefundedCents, RefundingCents: o.RefundingCents}
	if o.Payment != nil {
		p := Payment(*o.Payment)
		out.Payment = &p
	}
	return out
}

func paymentRecord(p shardstore.PaymentRecord) PaymentRecord { return PaymentRecord(p) }
func refundRecord(r shardstore.RefundRecord) RefundRecord    { return RefundRecord(r) }
func refundFailure(f shardstore.RefundFailure) RefundFailure { return RefundFailure(f) }
func failedRefund(f shardstore.FailedRefund) FailedRefund    { return FailedRefund(f) }
