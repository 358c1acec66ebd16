package shardstore

// The states of the shard's rows. Each type's constants are exactly the
// values its table's CHECK constraint allows (states_test.go keeps the two
// in step).

// SeatStatus is the state of an event seat (event_seats.status).
type SeatStatus string

// Seat states.
const (
	SeatAvailable SeatStatus = "available"
	SeatHeld      SeatStatus = "held"
	SeatSold      SeatStatus = "sold"
	SeatBlocked   SeatStatus = "blocked"
)

// HoldStatus is the state of a hold (holds.status).
type HoldStatus string

// Hold states: active until released by its fan, expired by time, or
// converted by a payment.
const (
	HoldActive    HoldStatus = "active"
	HoldReleased  HoldStatus = "released"
	HoldExpired   HoldStatus = "expired"
	HoldConverted HoldStatus = "converted"
)

// OrderStatus is the state of an order (orders.status).
type OrderStatus string

// Order states.
const (
	OrderPending   OrderStatus = "pending"
	OrderPaid      OrderStatus = "paid"
	OrderCancelled OrderStatus = "cancelled" // its hold was released
	OrderExpired   OrderStatus = "expired"   // its hold expired
	// OrderRefundPending: its money is being given back; refunded once
	// the PSP confirms.
	OrderRefundPending OrderStatus = "refund_pending"
	OrderRefunded      OrderStatus = "refunded"
)

// PaymentStatus is the state of a payment attempt (payments.status), as the
// PSP reports it.
type PaymentStatus string

// Payment states.
const (
	PaymentQueued         PaymentStatus = "queued" // waiting for PSP quota
	PaymentRequiresAction PaymentStatus = "requires_action"
	PaymentProcessing     PaymentStatus = "processing"
	PaymentSucceeded      PaymentStatus = "succeeded"
	PaymentFailed         PaymentStatus = "failed"
	PaymentCanceled       PaymentStatus = "canceled"
	PaymentRefunded       PaymentStatus = "refunded"
)

// EndedOrder is the state of the pending order of a hold that ends in hs.
func EndedOrder(hs HoldStatus) OrderStatus {
	if hs == HoldReleased {
		return OrderCancelled
	}
	return OrderExpired
}

// RefundStatus is what became of a refund an organizer asked for
// (refunds.status).
type RefundStatus string

// Refund outcomes: being asked (recorded before the PSP is called, its
// outcome after), the PSP gave the money back, accepted to (pending: its
// webhook will say), refused, failed after it was pending (refund.failed),
// or never answered (asked again under the same idempotency key). After a
// refusal or a failure the next attempt asks under a new key.
const (
	RefundAsking     RefundStatus = "asking"
	RefundSucceeded  RefundStatus = "succeeded"
	RefundPending    RefundStatus = "pending"
	RefundRefused    RefundStatus = "refused"
	RefundFailed     RefundStatus = "failed"
	RefundUnanswered RefundStatus = "unanswered"
)
