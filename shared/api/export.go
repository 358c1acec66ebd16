package api

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/shardstore"
)

// CSV exports of an event's orders and attendees, streamed a page at a
// time: memory stays flat however large the event.

var (
	ordersHeader    = []string{"order_id", "status", "buyer_email", "buyer_name", "tickets", "total", "currency", "created_at", "paid_at"}
	attendeesHeader = []string{"ticket_id", "order_id", "seat", "price_level", "price", "currency", "buyer_email", "buyer_name", "order_status", "void"}
)

func (s *Server) exportOrders(w http.ResponseWriter, r *http.Request) error {
	return s.export(w, r, "orders", ordersHeader, false, func(o shardstore.ExportOrder, b organizer.Buyer) [][]string {
		paid := ""
		if o.PaidAt != nil {
			paid = o.PaidAt.UTC().Format(time.RFC3339)
		}
		return [][]string{{itoa(o.ID), string(o.Status), b.Email, b.Name, strconv.Itoa(o.Tickets), money(o.TotalCents), o.Currency,
			o.CreatedAt.UTC().Format(time.RFC3339), paid}}
	})
}

func (s *Server) exportAttendees(w http.ResponseWriter, r *http.Request) error {
	return s.export(w, r, "attendees", attendeesHeader, true, func(o shardstore.ExportOrder, b organizer.Buyer) [][]string {
		var rows [][]string
		for _, a := range o.Attendees {
			rows = append(rows, []string{itoa(a.TicketID), itoa(o.ID), a.Label, a.PriceLevel, money(int64(a.PriceCents)), o.Currency,
				b.Email, b.Name, string(o.Status), strconv.FormatBool(a.Void)})
		}
		return rows
	})
}

// export streams one CSV of an event the caller organizes. Errors before
// the first byte are problems; after it, the connection is cut so the
// download is visibly incomplete rather than silently short.
func (s *Server) export(w http.ResponseWriter, r *http.Request, name string, header []string, tickets bool,
	rows func(shardstore.ExportOrder, organizer.Buyer) [][]string) error {
	_, e, err := s.ownEvent(r)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="event-`+itoa(e.ID)+`-`+name+`.csv"`)
	w.Header().Set("Cache-Control", "private, no-store")
	out := csv.NewWriter(w)
	out.Write(header)
	err = s.orders.Export(r.Context(), e.ID, e.Shard, tickets, func(page []shardstore.ExportOrder) error {
		ids := make([]int64, len(page))
		for i, o := range page {
			ids[i] = o.UserID
		}
		buyers, err := s.organizer.Buyers(r.Context(), ids)
		if err != nil {
			return err
		}
		for _, o := range page {
			for _, row := range rows(o, buyers[o.UserID]) {
				for i := range row {
					row[i] = safeCell(row[i])
				}
				if err := out.Write(row); err != nil {
					return err
				}
			}
		}
		out.Flush()
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return out.Error()
	})
	out.Flush()
	if err != nil {
		s.log.Error("export cut short", "event", e.ID, "export", name, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
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
