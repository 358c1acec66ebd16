package pspsim

import (
	"slices"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/psp"
)

// Entry is one movement of money at the simulator.
type Entry struct {
	Kind      string    `json:"kind"` // "charge", "refund" or "dispute"
	Payment   string    `json:"payment"`
	OrderID   int64     `json:"order_id"` // as the payment was created; not necessarily a real order
	Reference string    `json:"reference"`
	Amount    int64     `json:"amount"`   // minor units: positive for a charge, negative for a refund or dispute
	Currency  string    `json:"currency"` // upper case
	At        time.Time `json:"at"`
}

// Ledger is every charge, refund and dispute, in the order they happened.
type Ledger []Entry

// Ledger returns a copy of what the simulator charged and gave back.
func (s *Sim) Ledger() Ledger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ledger)
}

func (s *Sim) recordLocked(kind string, p psp.Payment) {
	amount := p.Amount
	if kind != "charge" {
		amount = -amount
	}
	s.ledger = append(s.ledger, Entry{Kind: kind, Payment: p.ID, OrderID: p.OrderID, Reference: p.Reference,
		Amount: amount, Currency: strings.ToUpper(p.Currency), At: time.Now().UTC()})
}

// Net is what the provider kept, per currency: charges minus refunds and
// disputes.
func (l Ledger) Net() map[string]int64 {
	out := map[string]int64{}
	for _, e := range l {
		out[e.Currency] += e.Amount
	}
	return out
}

// NetByOrder is Net per order id; orders whose money all went back have
// zero entries, not missing ones.
func (l Ledger) NetByOrder() map[int64]map[string]int64 {
	out := map[int64]map[string]int64{}
	for _, e := range l {
		if out[e.OrderID] == nil {
			out[e.OrderID] = map[string]int64{}
		}
		out[e.OrderID][e.Currency] += e.Amount
	}
	return out
}
