package e2e

import (
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/fan"
	"github.com/catraca/catraca/tools/pspsim"
)

// TestOrganizerRefundsOneTicketOfThree: the box office refunds one ticket
// of a three-ticket order: it picks the ticket in the refund dialog (which
// shows the amount and will not go without a reason), gives a reason and a
// note, and confirms; the order reads partially refunded with the refund's
// amount, ticket, reason and who, the orders CSV carries the refunded
// amount and the reason, and the fan sees that ticket refunded and the
// two others still live.
func TestOrganizerRefundsOneTicketOfThree(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Partial Night", false, 480)
	buyer := apiFan{fan.New(s.st.URL, nil)}
	email := fmt.Sprintf("partial-%d@catraca.dev", time.Now().UnixNano())
	require.NoError(t, buyer.SignUp(context.Background(), email, "a-long-password", "Pia Partial"))
	order := buyer.buyN(t, id, 3)
	pool, err := s.st.App.Shards.ForRow(order)
	require.NoError(t, err)
	rows, err := pool.Query(context.Background(), `SELECT t.id FROM tickets t WHERE t.order_id = $1 ORDER BY t.id`, order)
	require.NoError(t, err)
	tickets, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	require.Len(t, tickets, 3)
	var price int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT price_cents FROM order_items WHERE order_id = $1`, order).Scan(&price))
	refunded := tickets[1]
	box := func(ticket int64) string {
		return `//dialog[@open]//input[@type="checkbox" and @value="` + strconv.FormatInt(ticket, 10) + `"]`
	}

	org := s.tabOf(t, s.newBrowser(t))
	s.logInOrganizer(t, org, "/organizer/orders/"+strconv.FormatInt(order, 10))
	require.NoError(t, chromedp.Do(org,
		chromedp.WaitVisible(`//h1[. = "Order #`+strconv.FormatInt(order, 10)+`"]`),
		chromedp.WaitVisible(`//span[contains(@class,"tag") and . = "Paid"]`),
		chromedp.Click(`//button[. = "Refund tickets…"]`),
		chromedp.WaitVisible(`//dialog[@open]//h2[. = "Refund order #`+strconv.FormatInt(order, 10)+`?"]`),
		chromedp.WaitVisible(`//dialog[@open]//button[. = "Refund the whole order"]`),
		chromedp.Click(box(tickets[0])),
		chromedp.Click(box(tickets[2])),
		chromedp.WaitVisible(`//dialog[@open]//button[. = "Refund 1 ticket"]`),
	))
	summary := evaluate[string](t, org, `document.querySelector('dialog[open] p[aria-live]').textContent`)
	require.Contains(t, summary, "Pia Partial ("+email+") gets ")
	require.Contains(t, summary, fmt.Sprintf("%d.%02d back on their card", price/100, price%100), "the dialog shows one ticket's price: %s", summary)
	accessible(t, org, "partial refund dialog")
	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//dialog[@open]//button[. = "Refund 1 ticket"]`),
		chromedp.WaitVisible(`//dialog[@open]//p[@role="alert" and . = "Choose a reason for this refund."]`),
	))
	accessible(t, org, "partial refund dialog without a reason")
	s.consoleShot(t, org, "refund-dialog")
	require.NoError(t, chromedp.Do(org,
		chromedp.SetValue(`//dialog[@open]//select`, "customer_request"),
		chromedp.SendKeys(`//dialog[@open]//textarea`, "Cannot come"),
		chromedp.Click(`//dialog[@open]//button[. = "Refund 1 ticket"]`),
		chromedp.WaitVisible(`//p[@role="status" and starts-with(., "Refunded 1 ticket")]`),
		chromedp.WaitVisible(`//dd/span[contains(@class,"tag") and . = "Partially refunded"]`),
		chromedp.WaitVisible(`//li[span[starts-with(., "#`+strconv.FormatInt(refunded, 10)+` ")]]//span[contains(@class,"tag") and . = "Refunded"]`),
		chromedp.WaitVisible(`//table[caption = "Refunds"]//tr[td[2]/span = "Refunded" and td[4] = "#`+strconv.FormatInt(refunded, 10)+
			`" and starts-with(td[5], "Customer request") and contains(td[5], "Cannot come") and starts-with(td[6], "Organizer #")]`),
	))
	require.Equal(t, 2, evaluate[int](t, org, `[...document.querySelectorAll('.items li .tag')].filter((e) => e.textContent === 'Valid').length`))
	accessible(t, org, "partially refunded order")

	csvText, err := chromedp.Run(org, chromedp.Evaluate[string](`fetch('/api/events/`+strconv.FormatInt(id, 10)+`/orders.csv').then((r) => r.text())`,
		chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	got, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	require.NoError(t, err, csvText)
	require.Equal(t, []string{"refunded", "refund_reason", "refund_note"}, got[0][9:])
	found := false
	for _, row := range got[1:] {
		if row[0] == strconv.FormatInt(order, 10) {
			found = true
			require.Equal(t, "paid", row[1])
			require.Equal(t, []string{fmt.Sprintf("%d.%02d", price/100, price%100), "customer_request", "Cannot come"}, row[9:])
			// The venue is in Rio de Janeiro: its clock, with its offset.
			require.Equal(t, []string{"created_at", "paid_at"}, got[0][7:9])
			for _, at := range row[7:9] {
				require.True(t, strings.HasSuffix(at, "-03:00"), "a time in the venue's zone with its offset: %q", at)
			}
		}
	}
	require.True(t, found, "the order is in the CSV:\n%s", csvText)

	fanTab := s.tabOf(t, s.newBrowser(t))
	door{s: s}.logIn(t, fanTab, email, "a-long-password", "/orders/"+strconv.FormatInt(order, 10))
	require.NoError(t, chromedp.Do(fanTab, chromedp.WaitVisible(`//h1[. = "Your tickets"]`)))
	require.NoError(t, chromedp.Do(fanTab,
		chromedp.WaitVisible(`//li[@data-ticket="`+strconv.FormatInt(refunded, 10)+`"]//p[starts-with(., "Refunded: this ticket no longer admits anyone")]`),
		chromedp.WaitVisible(`//p[contains(., "of this order was refunded to your card")]`),
	), "the page reads: %s", evaluate[string](t, fanTab, `document.querySelector('main').innerText`))
	for _, live := range []int64{tickets[0], tickets[2]} {
		require.True(t, evaluate[bool](t, fanTab, `!!document.querySelector('li[data-ticket="`+strconv.FormatInt(live, 10)+`"] svg.qr')`),
			"ticket %d still has its live code", live)
	}
	accessible(t, fanTab, "fan's order with a refunded ticket")
}

// refundResult reads the result of an order's first refund row.
const refundResult = `[...document.querySelectorAll('table')].find((t) => t.caption && t.caption.textContent === 'Refunds')
	.querySelector('tbody tr td:nth-of-type(2) span').textContent`

// TestPendingPartialRefundSaysSoUntilConfirmed: a refund of one ticket
// the PSP accepts as pending is not announced as done: the console says
// the provider accepted it and the refund row reads Pending; once the bank
// gives the money back (the PSP's refund.updated) the row reads Refunded.
func TestPendingPartialRefundSaysSoUntilConfirmed(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Slow Bank Night", false, 480)
	buyer := apiFan{fan.New(s.st.URL, nil)}
	require.NoError(t, buyer.SignUp(context.Background(), fmt.Sprintf("slow-bank-%d@catraca.dev", time.Now().UnixNano()), "a-long-password", "Sol Bank"))
	order := buyer.buyN(t, id, 2)
	s.st.Sim.SetFaults(pspsim.Faults{RefundsPending: true})
	t.Cleanup(func() { s.st.Sim.SetFaults(pspsim.Faults{}) })

	org := s.tabOf(t, s.newBrowser(t))
	s.logInOrganizer(t, org, "/organizer/orders/"+strconv.FormatInt(order, 10))
	require.NoError(t, chromedp.Do(org,
		chromedp.WaitVisible(`//span[contains(@class,"tag") and . = "Paid"]`),
		chromedp.Click(`//button[. = "Refund tickets…"]`),
		chromedp.WaitVisible(`//dialog[@open]//button[. = "Refund the whole order"]`),
		chromedp.Click(`(//dialog[@open]//input[@type="checkbox"])[1]`),
		chromedp.SetValue(`//dialog[@open]//select`, "customer_request"),
		chromedp.Click(`//dialog[@open]//button[. = "Refund 1 ticket"]`),
		chromedp.WaitVisible(`//table[caption = "Refunds"]//tr[td[2]/span]`),
	))
	said := text(t, org, `p[role="status"]`)
	require.False(t, strings.HasPrefix(said, "Refunded"), "a pending refund is not announced as done: %q", said)
	require.Contains(t, said, "accepted the refund of 1 ticket")
	require.Equal(t, "Pending", evaluate[string](t, org, refundResult))

	pending := s.st.Sim.PendingRefunds()
	require.Len(t, pending, 1)
	require.NoError(t, s.st.Sim.SettleRefund(pending[0], true))
	// The organizer looks again (the page does not follow the PSP).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		require.NoError(t, chromedp.Do(org, chromedp.Reload(), chromedp.WaitVisible(`//table[caption = "Refunds"]//tr[td[2]/span]`)))
		got := evaluate[string](t, org, refundResult)
		if got == "Refunded" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the refund row still reads %q", got)
	}
	require.NoError(t, chromedp.Do(org, chromedp.WaitVisible(`//dd/span[contains(@class,"tag") and . = "Partially refunded"]`)))
}
