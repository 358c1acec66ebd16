package controlroom

// The sales summary's wire types, named here and not on the store's rows,
// and the one place the rows become them. While a type has its row's
// fields, the conversion is Go's; when a row changes, it stops compiling
// here and becomes field by field, and no JSON name follows the column.

import "github.com/catraca/catraca/shared/shardstore"

// Summary is an event's sales now.
type Summary struct {
	Seats    SeatSummary   `json:"seats"`
	Pools    []PoolSummary `json:"pools"`
	Sales    Sales         `json:"sales"`
	Payments InFlight      `json:"payments"`
}

// SeatSummary are the reserved seats by state: per section, and as bitsets
// by layout index (bit i, least significant first in each byte) for a map.
type SeatSummary struct {
	Sections []SectionSummary `json:"sections"`
	Sold     string           `json:"sold"`
	Held     string           `json:"held"`
	Count    int              `json:"seat_count"`
}

// SectionSummary counts one section's seats.
type SectionSummary struct {
	Code      string `json:"code"`
	Sold      int    `json:"sold"`
	Held      int    `json:"held"`
	Available int    `json:"available"`
	Total     int    `json:"total"`
}

// PoolSummary counts one general-admission pool's places.
type PoolSummary struct {
	Code      string `json:"code"`
	Name      string `json:"name"`
	Sold      int    `json:"sold"`
	Held      int    `json:"held"`
	Available int    `json:"available"`
	Total     int    `json:"total"`
}

// Sales are an event's orders so far.
type Sales struct {
	RevenueCents  int64 `json:"revenue_cents"`
	OrdersPaid    int64 `json:"orders_paid"`
	TicketsSold   int64 `json:"tickets_sold"`
	OrdersPending int64 `json:"orders_pending"`
	Refunded      int64 `json:"orders_refunded"`
	RefundedCents int64 `json:"refunded_cents"`
}

// InFlight are an event's payments in flight: queued behind the PSP's rate
// limit, waiting on the fan at the PSP's page, or processing at the bank.
type InFlight struct {
	Queued         int64 `json:"queued"`
	RequiresAction int64 `json:"requires_action"`
	Processing     int64 `json:"processing"`
}

// summaryOf converts the store's summary.
func summaryOf(s shardstore.Summary) Summary {
	return Summary{
		Seats: SeatSummary{Sold: s.Seats.Sold, Held: s.Seats.Held, Count: s.Seats.Count,
			Sections: shardstore.Rows(s.Seats.Sections, func(r shardstore.SectionSummary) SectionSummary { return SectionSummary(r) })},
		Pools:    shardstore.Rows(s.Pools, func(r shardstore.PoolSummary) PoolSummary { return PoolSummary(r) }),
		Sales:    Sales(s.Sales),
		Payments: InFlight(s.Payments),
	}
}
