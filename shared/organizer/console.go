package organizer

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/catraca/catraca/shared/catalogstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/reject"
	"github.com/catraca/catraca/shared/shardstore"
)

// EventIDs lists the ids of organizerID's events.
func (s *Service) EventIDs(ctx context.Context, organizerID int64) ([]int64, error) {
	ids, err := catalogstore.EventIDsByCreator(ctx, s.catalog, organizerID)
	if err != nil {
		return nil, fmt.Errorf("events of organizer %d: %w", organizerID, err)
	}
	return ids, nil
}

// EventBuyers lists, from every shard's reader, the buyers of events'
// paid orders with their tickets and orders, per event (the console's
// view of linked accounts).
func (s *Service) EventBuyers(ctx context.Context, events []int64) ([]shardstore.EventBuyer, error) {
	var out []shardstore.EventBuyer
	for _, id := range s.stores.IDs() {
		st, err := s.stores.Reader(id)
		if err != nil {
			return nil, err
		}
		rows, err := st.EventBuyers(ctx, events)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// Admission is the live control of an event's waiting room; a field left
// nil keeps its value, so a pause never touches the ceiling.
type Admission struct {
	Paused  *bool `json:"paused"`
	Ceiling *int  `json:"ceiling"`
}

// SetAdmission pauses or resumes admission and sets the ceiling of active
// shoppers. The admission controller re-reads events every second, so the
// change applies at its next tick. ifMatch guards only the fields sent: a
// write is refused if one of them changed after that version (a resume
// from a page that missed someone's pause must not undo it; a ceiling
// must not silently replace one set from another tab), never because
// another setting did.
func (s *Service) SetAdmission(ctx context.Context, organizerID, eventID int64, ifMatch IfMatch, a Admission) (event.Event, error) {
	var guarded []string
	if a.Paused != nil {
		guarded = append(guarded, "admission_paused")
	}
	if a.Ceiling != nil {
		guarded = append(guarded, "queue_ceiling")
	}
	return s.write(ctx, organizerID, eventID, nil, func(tx pgx.Tx, e event.Event) error {
		if err := unchanged(ctx, tx, e, ifMatch, guarded...); err != nil {
			return err
		}
		paused, ceiling := e.WaitingRoom.Paused, e.WaitingRoom.Ceiling
		set(&paused, a.Paused)
		set(&ceiling, a.Ceiling)
		if ceiling <= 0 || ceiling > maxCeiling {
			return reject.New(ErrInvalidEvent, "/ceiling", fmt.Sprintf("The ceiling must be between 1 and %d shoppers at once.", maxCeiling))
		}
		if err := catalogstore.SetAdmission(ctx, tx, eventID, paused, ceiling); err != nil {
			return fmt.Errorf("set admission of event %d: %w", eventID, err)
		}
		return nil
	})
}

// Buyer is the account behind an order.
type Buyer struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// Buyers reads the accounts of ids.
func (s *Service) Buyers(ctx context.Context, ids []int64) (map[int64]Buyer, error) {
	accounts, err := catalogstore.Accounts(ctx, s.catalog, ids)
	if err != nil {
		return nil, fmt.Errorf("buyers: %w", err)
	}
	out := make(map[int64]Buyer, len(accounts))
	for id, a := range accounts {
		out[id] = Buyer{Email: a.Email, Name: a.Name}
	}
	return out, nil
}

// AccountByEmail finds the account with an email address, ignoring case
// (found is false when there is none).
func (s *Service) AccountByEmail(ctx context.Context, email string) (id int64, found bool, err error) {
	a, found, err := catalogstore.AccountByEmail(ctx, s.catalog, email)
	return a.ID, found, err
}

// Zone is the time zone of an event's venue, in which organizers read the
// event's times (CSV exports). A zone this build does not know reads as
// UTC rather than failing an export.
func (s *Service) Zone(ctx context.Context, eventID int64) (*time.Location, error) {
	name, err := catalogstore.EventZone(ctx, s.catalog, eventID)
	if err != nil {
		return nil, fmt.Errorf("time zone of event %d: %w", eventID, err)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC, nil
	}
	return loc, nil
}
