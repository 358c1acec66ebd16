package inventory

import (
	"errors"
	"fmt"

	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shardstore"
)

// Domain errors; the API maps each to a status a client can act on.
var (
	ErrSeatsTaken        = errors.New("seats already taken")
	ErrUnknownSeat       = errors.New("unknown seat")
	ErrForeignSeat       = errors.New("seat is not part of this event")
	ErrSoldOut           = errors.New("sold out")
	ErrSalesClosed       = errors.New("sales are closed")
	ErrAccountLimit      = errors.New("ticket limit per account reached")
	ErrInvalidRequest    = errors.New("invalid hold request")
	ErrKeyReused         = errors.New("idempotency key reused with a different request")
	ErrHoldNotFound      = errors.New("hold not found")
	ErrHoldNotReleasable = errors.New("hold can no longer be released")
)

// SeatError names the seats a request failed on, so the map can resync.
type SeatError struct {
	Err   error
	Seats []int64
}

func (e *SeatError) Error() string { return fmt.Sprintf("%v: %v", e.Err, e.Seats) }
func (e *SeatError) Unwrap() error { return e.Err }

// invalid refuses a hold request; pointer names the body value at fault.
func invalid(pointer, format string, a ...any) error {
	return reject.New(ErrInvalidRequest, pointer, "Invalid hold request: "+fmt.Sprintf(format, a...)+".")
}

// LimitError is ErrAccountLimit with how many more tickets the account may
// still hold at the event, so a fan can be told to ask for fewer.
type LimitError struct {
	Err       *reject.Error
	Remaining int
}

func (e *LimitError) Error() string { return e.Err.Error() }
func (e *LimitError) Unwrap() error { return e.Err }

// overLimit refuses a hold over the per-account limit, with the shard's
// count of the account's tickets.
func overLimit(le *shardstore.LimitError) error {
	return &LimitError{Err: reject.New(ErrAccountLimit, "", "That is more than the ticket limit for this event allows: "+le.Detail+"."),
		Remaining: le.Remaining}
}
