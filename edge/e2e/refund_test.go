package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/fan"
)

// TestOrganizerFindsAndRefundsAnOrder: the organizer finds a fan's order
// by email (kept in the page's address) and by ticket code (never in it),
// opens it and refunds it after confirming; the order shows refunded with
// void tickets and its refund attempt, and the exports and the refund
// failures (none) are a click away.
func TestOrganizerFindsAndRefundsAnOrder(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Refund Night", false, 480)
	buyer := apiFan{fan.New(s.st.URL, nil)}
	email := fmt.Sprintf("refund-me-%d@catraca.dev", time.Now().UnixNano())
	require.NoError(t, buyer.SignUp(context.Background(), email, "a-long-password", "Rita Refund"))
	order := buyer.buy(t, id)

	org := s.tabOf(t, s.newBrowser(t))
	s.logInOrganizer(t, org, "/organizer/orders")
	require.NoError(t, chromedp.Do(org,
		chromedp.WaitVisible(`//h1[. = "Orders"]`),
		chromedp.WaitVisible(`//button[contains(., "Orders CSV")]`),
		chromedp.WaitVisible(`//h2[. = "Refund failures"]/following-sibling::p[starts-with(., "None")]`),
		chromedp.SendKeys(chromedp.CSS(`#q`), email),
		chromedp.Click(`//form[@role="search"]//button[. = "Find"]`),
		chromedp.WaitVisible(`//table//a[. = "#`+strconv.FormatInt(order, 10)+`"]`),
	))
	s.shot(t, org, "orders")
	accessible(t, org, "order search")
	require.Contains(t, evaluate[string](t, org, `location.search`), "q=", "an email stays in the page's address")

	// A ticket code is searched in a request body and never reaches the
	// page's address (history, the edge's access logs).
	pool, err := s.st.App.Shards.ForRow(order)
	require.NoError(t, err)
	var code string
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT code FROM tickets WHERE order_id = $1 LIMIT 1`, order).Scan(&code))
	evaluate[string](t, org, `document.getElementById('q').value = ''`)
	require.NoError(t, chromedp.Do(org,
		chromedp.SendKeys(chromedp.CSS(`#q`), code),
		chromedp.Click(`//form[@role="search"]//button[. = "Find"]`),
		chromedp.WaitVisible(`//table//a[. = "#`+strconv.FormatInt(order, 10)+`"]`),
	))
	require.Equal(t, "/organizer/orders", evaluate[string](t, org, `location.pathname + location.search`), "the code is not in the address")
	// A link with a code in it searches nothing and drops it.
	require.NoError(t, chromedp.Do(org,
		chromedp.Navigate(s.st.URL+"/organizer/orders?q="+url.QueryEscape(code)),
		chromedp.WaitVisible(`//p[contains(., "Ticket codes are not searched from the page’s address")]`),
	))
	require.Zero(t, evaluate[int](t, org, `document.querySelectorAll('table').length`), "nothing searched")
	require.Equal(t, "/organizer/orders", evaluate[string](t, org, `location.pathname + location.search`))
	require.NoError(t, chromedp.Do(org,
		chromedp.SendKeys(chromedp.CSS(`#q`), email),
		chromedp.Click(`//form[@role="search"]//button[. = "Find"]`),
		chromedp.WaitVisible(`//table//a[. = "#`+strconv.FormatInt(order, 10)+`"]`),
	))

	require.NoError(t, chromedp.Do(org,
		chromedp.Click(`//table//a[. = "#`+strconv.FormatInt(order, 10)+`"]`),
		chromedp.WaitVisible(`//h1[. = "Order #`+strconv.FormatInt(order, 10)+`"]`),
		chromedp.WaitVisible(`//span[contains(@class,"tag") and . = "Paid"]`),
		chromedp.Click(`//button[starts-with(., "Refund ")]`),
		chromedp.WaitVisible(`//dialog[@open]//h2[starts-with(., "Refund order")]`),
	))
	accessible(t, org, "refund confirmation")
	require.NoError(t, chromedp.Do(org,
		chromedp.SetValue(`//dialog[@open]//select`, "customer_request"),
		chromedp.Click(`//dialog[@open]//button[. = "Refund the whole order"]`),
		chromedp.WaitVisible(`//p[@role="status" and starts-with(., "Refunded")]`),
		chromedp.WaitVisible(`//dd/span[contains(@class,"tag") and . = "Refunded"]`),
		chromedp.WaitVisible(`//li/span[contains(@class,"tag") and . = "Void"]`),
		chromedp.WaitVisible(`//table[caption = "Refunds"]//tr[td[1] = "1" and td[2]/span = "Refunded"]`),
	))
	require.Zero(t, evaluate[int](t, org, `[...document.querySelectorAll('button')].filter(b => b.textContent.startsWith('Refund ')).length`),
		"a refunded order offers no second refund")
	s.shot(t, org, "order-refunded")
	accessible(t, org, "refunded order")
}
