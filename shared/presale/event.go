package presale

import (
	"context"
	"errors"
	"time"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/reject"
)

// ErrEventConflict refuses a change of an event that would break the
// rules its presale was opened under.
var ErrEventConflict = errors.New("presale: event change breaks the presale")

// breaches are the ways an event can stop fitting its presale: the rules
// Spec.check asks of a new presale, and Keeps of every later change.
type breaches struct {
	closesAfterStart bool // the registration closes after the sale starts
	endsBeforeStart  bool // the presale ends by the sale's start
	endsAfterSale    bool // the presale ends after the sale
	roomOff          bool // no waiting room to admit code holders only
}

func breachesOf(registrationCloses, presaleEnds time.Time, e event.Event) breaches {
	return breaches{
		closesAfterStart: registrationCloses.After(e.SaleStartsAt),
		endsBeforeStart:  !presaleEnds.After(e.SaleStartsAt),
		endsAfterSale:    presaleEnds.After(e.SaleEndsAt),
		roomOff:          !e.WaitingRoom.Enabled,
	}
}

// closingSlack is how far ahead of the server's clock a sale's new end
// still reads as "now": the console sends its own clock's time.
const closingSlack = time.Minute

// Keeps refuses, in the organizer's transaction tx that holds the event's
// row lock, a change from before to after that would break the rules of
// the event's presale while it is not over: the sale may not start before
// the registration closes nor after the presale ends, may not end before
// the presale (unless it ends now: closing the sale), and the waiting
// room, which admits code holders only, stays on. Without such a check an edit undid the presale: the room turned off
// let any fan hold seats during it. A change that touches none of these
// settings is not checked, and reads nothing.
func Keeps(ctx context.Context, tx catalogstore.DB, before, after event.Event, now time.Time) error {
	if before.SaleStartsAt.Equal(after.SaleStartsAt) && before.SaleEndsAt.Equal(after.SaleEndsAt) &&
		before.WaitingRoom.Enabled == after.WaitingRoom.Enabled {
		return nil
	}
	p, found, err := catalogstore.GetPresale(ctx, tx, after.ID, false)
	if err != nil || !found || !now.Before(p.SaleEndsAt) {
		return err
	}
	closes, ends := p.RegistrationClosesAt.UTC().Format(time.RFC3339), p.SaleEndsAt.UTC().Format(time.RFC3339)
	var reasons []reject.Reason
	add := func(ptr, detail string) { reasons = append(reasons, reject.Reason{Pointer: ptr, Detail: detail}) }
	b := breachesOf(p.RegistrationClosesAt, p.SaleEndsAt, after)
	// Closing the sale now (the console's "Close sale") cuts the presale
	// short but opens nothing to fans without a code: an organizer must
	// always be able to stop a sale.
	if !after.SaleEndsAt.After(now.Add(closingSlack)) {
		b.endsAfterSale = false
	}
	if b.closesAfterStart {
		add("/sale_starts_at", "The sale may not start before the presale's registration closes ("+closes+"): its codes are drawn before the presale begins.")
	}
	if b.endsBeforeStart {
		add("/sale_starts_at", "The sale must start before the presale ends ("+ends+"): the presale is the first part of the sale.")
	}
	if b.endsAfterSale {
		add("/sale_ends_at", "The sale may not end before the presale does ("+ends+").")
	}
	if b.roomOff {
		add("/waiting_room/enabled", "The waiting room must stay on until the presale ends ("+ends+"): it is what admits presale code holders only.")
	}
	if len(reasons) == 0 {
		return nil
	}
	return &reject.Error{Kind: ErrEventConflict, Reasons: reasons, Summary: "This event has a verified-fan presale (registration closes at " + closes +
		", presale ends at " + ends + ") and this change would break it: " + reasons[0].Detail}
}
