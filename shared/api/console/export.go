package console

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // venues' zones for export times, where the host has no zoneinfo (Lambda)

	"github.com/catraca/catraca/shared/api/web"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/problem"
	"github.com/catraca/catraca/shared/shardstore"
)

// CSV exports of an event's orders and attendees, in pages.

var (
	ordersHeader = []string{"order_id", "status", "buyer_email", "buyer_name", "tickets", "total", "currency", "created_at", "paid_at",
		"refunded", "refund_reason", "refund_note"}
	attendeesHeader = []string{"ticket_id", "order_id", "seat", "price_level", "price", "currency", "buyer_email", "buyer_name",
		"holder_email", "holder_name", "order_status", "void"}
)

// exportOrders's times are the event's local times with their offset
// (2026-12-07T11:30:00-03:00): what the box office's clock read, and still
// one instant.
func (s *Handlers) exportOrders(w http.ResponseWriter, r *http.Request) error {
	return s.export(w, r, "orders", ordersHeader, false, func(o shardstore.ExportOrder, people map[int64]organizer.Buyer, zone *time.Location) [][]string {
		b := people[o.UserID]
		paid := ""
		if o.PaidAt != nil {
			paid = o.PaidAt.In(zone).Format(time.RFC3339)
		}
		return [][]string{{web.Itoa(o.ID), string(o.Status), b.Email, b.Name, strconv.Itoa(o.Tickets), money(o.TotalCents), o.Currency,
			o.CreatedAt.In(zone).Format(time.RFC3339), paid, money(o.RefundedCents), o.RefundReason, o.RefundNote}}
	})
}

func (s *Handlers) exportAttendees(w http.ResponseWriter, r *http.Request) error {
	return s.export(w, r, "attendees", attendeesHeader, true, func(o shardstore.ExportOrder, people map[int64]organizer.Buyer, _ *time.Location) [][]string {
		var rows [][]string
		b := people[o.UserID]
		for _, a := range o.Attendees {
			h := b
			if a.HolderID != nil {
				// The door's scan names the holder by the name on the ticket.
				h = organizer.Buyer{Email: people[*a.HolderID].Email, Name: *a.HolderName}
			}
			rows = append(rows, []string{web.Itoa(a.TicketID), web.Itoa(o.ID), a.Label, a.PriceLevel, money(int64(a.PriceCents)), o.Currency,
				b.Email, b.Name, h.Email, h.Name, string(o.Status), strconv.FormatBool(a.Void)})
		}
		return rows
	})
}

// Exports come a page at a time, each page a request of its own: the API
// runs as a buffered Lambda function, whose response is capped at 6 MB
// (an 80,000-seat attendee list is about 10 MB), and a page built in
// memory before its first byte fails as a problem, never as a cut
// connection. The first page (no after) starts with the header row and
// the pages' bodies concatenate to the whole file; Link rel="next" (RFC
// 8288) names the next page while there is one.
const (
	// exportPageBytes bounds a page's CSV. JSON escapes each byte in at
	// most 6 (\u00XX), so even the worst page stays under Lambda's 6 MB.
	exportPageBytes = 768 << 10
	// exportLimit is the default and largest number of orders per page.
	exportLimit = 2000
)

// export answers one page of a CSV of an event the caller organizes.
func (s *Handlers) export(w http.ResponseWriter, r *http.Request, name string, header []string, tickets bool,
	rows func(o shardstore.ExportOrder, people map[int64]organizer.Buyer, zone *time.Location) [][]string) error {
	_, e, err := s.ownEvent(r)
	if err != nil {
		return err
	}
	after, limit, err := exportCursor(r)
	if err != nil {
		return err
	}
	page, more, err := s.Orders.ExportPage(r.Context(), e.ID, e.Shard, after, limit, tickets)
	if err != nil {
		return fmt.Errorf("export %s of event %d after %d: %w", name, e.ID, after, err)
	}
	ids := make([]int64, 0, len(page))
	for _, o := range page {
		ids = append(ids, o.UserID)
		for _, a := range o.Attendees {
			if a.HolderID != nil {
				ids = append(ids, *a.HolderID)
			}
		}
	}
	people, err := s.Organizer.Buyers(r.Context(), ids)
	if err != nil {
		return err
	}
	zone, err := s.Organizer.Zone(r.Context(), e.ID)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	out := csv.NewWriter(&buf)
	if after == 0 {
		total, err := s.Orders.ExportTotal(r.Context(), e.ID, e.Shard)
		if err != nil {
			return err
		}
		w.Header().Set("Export-Total-Orders", strconv.Itoa(total))
		out.Write(header)
	}
	next, n := after, 0
	for _, o := range page {
		mark := buf.Len()
		for _, row := range rows(o, people, zone) {
			for i := range row {
				row[i] = safeCell(row[i])
			}
			out.Write(row)
		}
		out.Flush()
		if buf.Len() > exportPageBytes && n > 0 {
			buf.Truncate(mark) // this order starts the next page
			more = true
			break
		}
		next, n = o.ID, n+1
	}
	if err := out.Error(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="event-`+web.Itoa(e.ID)+`-`+name+`.csv"`)
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Export-Page-Orders", strconv.Itoa(n))
	if more {
		q := url.Values{"after": {web.Itoa(next)}, "limit": {strconv.Itoa(limit)}}
		w.Header().Set("Link", "<"+r.URL.Path+"?"+q.Encode()+`>; rel="next"`)
	}
	w.Write(buf.Bytes())
	return nil
}

// exportCursor reads an export page's after (the last order id of the
// page before; 0 for the first page) and limit (orders per page).
func exportCursor(r *http.Request) (after int64, limit int, err error) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 1 {
			return 0, 0, problem.New(http.StatusBadRequest, "invalid-parameter",
				"Parameter after must be an order id, as in the Link header of the page before; leave it out for the first page.")
		}
	}
	limit, err = web.QueryLimit(r, exportLimit, exportLimit, "orders per page")
	return after, limit, err
}

// safeCell keeps a spreadsheet from running a cell as a formula (CSV
// injection): text starting with = + - @ (or a tab or carriage return,
// which some programs skip before one) gets a leading apostrophe.
func safeCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// money writes cents as a decimal amount.
func money(cents int64) string {
	return strconv.FormatInt(cents/100, 10) + "." + strconv.FormatInt(cents%100/10, 10) + strconv.FormatInt(cents%10, 10)
}
