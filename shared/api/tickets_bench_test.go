package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/catraca/catraca/shared/entry"
	"github.com/catraca/catraca/tools/pspsim"
)

// pngTickets is the ticket list as it was answered before it was paged:
// every ticket with a 320 px PNG per code, base64 in a data: URL. It is
// the baseline of BenchmarkMyTickets, and lives only here.
func pngTickets(ctx context.Context, svc *entry.Service, account int64) ([]byte, error) {
	page, err := svc.Page(ctx, account, "", entry.MaxPage)
	if err != nil {
		return nil, err
	}
	type pngCode struct {
		entry.TimedCode
		QR string `json:"qr"`
	}
	type pngTicket struct {
		entry.Ticket
		Codes []pngCode `json:"codes,omitempty"`
	}
	out := make([]pngTicket, len(page.Tickets))
	for i, t := range page.Tickets {
		out[i].Ticket = t
		for _, c := range t.Codes {
			png, err := qrcode.Encode(c.Code, qrcode.Medium, 320)
			if err != nil {
				return nil, err
			}
			out[i].Codes = append(out[i].Codes, pngCode{TimedCode: c, QR: "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)})
		}
	}
	var b bytes.Buffer
	err = json.NewEncoder(&b).Encode(map[string]any{"tickets": out, "now": svc.Now().UTC()})
	return b.Bytes(), err
}

// BenchmarkMyTickets: an account holding 30 tickets of one event opens
// its ticket page. png is the old answer (every ticket, its codes as PNGs)
// for the same tickets, the same database reads; doors is the handler
// when the event's doors open within the hour (all 30 tickets with codes,
// as QR matrices); later is the list three days before (no codes); one is
// a single ticket opened. Each reports the answer's bytes.
func BenchmarkMyTickets(b *testing.B) {
	const tickets = 30
	s := newShop(b, pspsim.Faults{})
	org := newFan(b, s.srv)
	if r := org.do(http.MethodPost, "/api/session", map[string]any{"email": "org@example.com", "password": "a long enough password"}); r.Status != http.StatusOK {
		b.Fatal(string(r.Raw))
	}
	ev := "/api/events/" + itoa(s.eventID)
	if r := org.do(http.MethodPatch, ev, map[string]any{"max_per_hold": tickets, "max_per_account": tickets}); r.Status != http.StatusOK {
		b.Fatal(string(r.Raw))
	}
	f := newFan(b, s.srv)
	account := f.signUp("many@example.com")
	s.paidTickets(b, f, "bench", s.seats[:tickets]...)
	u, _ := url.Parse(s.srv.URL)
	handler := s.app.Handler()
	get := func(path string) int {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for _, c := range f.client.Jar.Cookies(u) {
			req.AddCookie(c)
		}
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w.Body.Len()
	}
	doors := func(at time.Time) {
		r := org.do(http.MethodPut, ev+"/entry", map[string]any{"doors_open_at": at, "static_codes": false, "transfers_allowed": true, "max_transfers": 1})
		if r.Status != http.StatusOK {
			b.Fatal(string(r.Raw))
		}
	}
	list, _ := ticketPage(b, f, "?limit=1")
	one := "/api/me/tickets/" + itoa(int64(list[0]["id"].(float64)))
	run := func(name string, op func() int) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = op()
			}
			b.ReportMetric(float64(n), "bytes/resp")
		})
	}
	doors(time.Now().Add(time.Hour))
	run("png", func() int {
		body, err := pngTickets(context.Background(), s.app.Entry, account)
		if err != nil {
			b.Fatal(err)
		}
		return len(body)
	})
	run("doors", func() int { return get("/api/me/tickets?limit=50") })
	run("one", func() int { return get(one) })
	doors(time.Now().Add(72 * time.Hour))
	run("later", func() int { return get("/api/me/tickets?limit=50") })
}
