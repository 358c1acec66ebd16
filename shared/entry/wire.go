package entry

// Entry's wire types: the rules, grants and conflicts the API shows and
// takes, named here and not on the store's rows, and the one place rows
// become them. While a type has its row's fields, the conversion is Go's;
// when a row changes, it stops compiling here and becomes field by field,
// and no JSON name follows the column.

import (
	"time"

	"github.com/catraca/catraca/shared/shardstore"
)

// Settings are an event's entry rules.
type Settings struct {
	// DoorsOpenAt: scans before it answer "not valid yet" (nil: any time).
	DoorsOpenAt *time.Time `json:"doors_open_at"`
	// StaticCodes lets fans print a code that does not rotate.
	StaticCodes      bool `json:"static_codes"`
	TransfersAllowed bool `json:"transfers_allowed"`
	MaxTransfers     int  `json:"max_transfers"`
}

// Grant is a door-staff grant as the organizer sees it: the email they
// typed, never the account's name or id.
type Grant struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	GrantedAt time.Time `json:"granted_at"`
	// Account is whose grant it is (for the list's older grants, which
	// kept no email).
	Account int64 `json:"-"`
}

// ConflictEntry is a ticket admitted by two gates: the losing scan and
// the admission of record.
type ConflictEntry struct {
	Ticket    int64     `json:"ticket_id"`
	ScanID    string    `json:"-"`
	Gate      string    `json:"gate"`
	At        time.Time `json:"scanned_at"`
	FirstGate string    `json:"first_gate"`
	FirstAt   time.Time `json:"first_at"`
}

func grant(g shardstore.DoorGrant) Grant             { return Grant(g) }
func conflict(c shardstore.Conflict) ConflictEntry   { return ConflictEntry(c) }
func settingsOf(s shardstore.EntrySettings) Settings { return Settings(s) }
func (s Settings) row() shardstore.EntrySettings     { return shardstore.EntrySettings(s) }
