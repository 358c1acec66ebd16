package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/demo"
	"github.com/catraca/catraca/tools/lambdatest"
)

// lambdaPayloadLimit is what Lambda (and the emulator) accepts as a
// buffered function's response.
const lambdaPayloadLimit = 6 * 1024 * 1024

// TestStadiumExportUnderRuntimeInterfaceEmulator: an 80,000-ticket
// attendee list (about 10 MB of CSV, more than a buffered Lambda response
// may carry) comes out of the real bootstrap page by page, every page under
// the payload limit, and the pages appended are the whole list.
func TestStadiumExportUnderRuntimeInterfaceEmulator(t *testing.T) {
	t.Parallel()
	a := apptest.New(t, 1)
	fn, _ := lambdatest.StartFunction(t, "api", a.Config, nil)
	ctx := context.Background()

	const password = "export a stadium"
	org, err := a.Accounts.SignUp(ctx, "stadium-org@example.com", password, "Org")
	require.NoError(t, err)
	require.NoError(t, pgstore.New(a.Catalog).SetRole(ctx, org.ID, account.RoleOrganizer))
	var buyers []int64
	names := map[string]string{"ana@example.com": `=HYPERLINK("http://evil.example")`, "bia@example.com": `Bia "B", da Silva`}
	for email, name := range names {
		b, err := a.Accounts.SignUp(ctx, email, password, name)
		require.NoError(t, err)
		buyers = append(buyers, b.ID)
	}
	l, err := a.Organizer.ImportLayoutAs(ctx, org.ID, 0, venue.Stadium("Estádio Export", "Recife", 20, 80000))
	require.NoError(t, err)
	now := time.Now().UTC()
	e, err := a.Organizer.CreateEvent(ctx, org.ID, organizer.EventSpec{VenueID: l.VenueID, LayoutVersion: l.Version,
		Name: "Export Stadium", Category: "music", StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour),
		SaleEndsAt: now.Add(47 * time.Hour), PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 9000}, {Code: "B", PriceCents: 7000},
			{Code: "C", PriceCents: 5000}, {Code: "GA", PriceCents: 3000}}})
	require.NoError(t, err)
	shard, err := a.Shards.ForEvent(ctx, e.ID)
	require.NoError(t, err)
	require.NoError(t, demo.BulkOrders(ctx, shard, e.ID, buyers, 20000, 4))

	var session events.APIGatewayV2HTTPResponse
	fn.Invoke(t, lambdatest.URLRequest(http.MethodPost, "/api/session",
		`{"email":"stadium-org@example.com","password":"`+password+`"}`, nil), &session)
	require.Equal(t, http.StatusOK, session.StatusCode, session.Body)
	var token struct{ Token string }
	require.NoError(t, json.Unmarshal([]byte(session.Body), &token))

	next := regexp.MustCompile(`^<([^>?]+)\?([^>]+)>; rel="next"$`)
	export := func(path string) ([][]string, int) {
		var all strings.Builder
		pages, query, largest := 0, "", 0
		for {
			req := lambdatest.URLRequest(http.MethodGet, path, "", map[string]string{"authorization": "Bearer " + token.Token})
			req.RawQueryString = query
			raw := fn.InvokeRaw(t, req)
			require.Less(t, len(raw), lambdaPayloadLimit, "page %d fits a buffered response", pages)
			largest = max(largest, len(raw))
			var res events.APIGatewayV2HTTPResponse
			require.NoError(t, json.Unmarshal(raw, &res))
			require.Equal(t, http.StatusOK, res.StatusCode, res.Body)
			require.False(t, res.IsBase64Encoded)
			all.WriteString(res.Body)
			pages++
			m := next.FindStringSubmatch(res.Headers["Link"])
			if m == nil {
				break
			}
			require.Equal(t, path, m[1])
			query = m[2]
		}
		rows, err := csv.NewReader(strings.NewReader(all.String())).ReadAll()
		require.NoError(t, err)
		t.Logf("%s: %d pages, %d bytes of CSV, largest Lambda response %d bytes", path, pages, all.Len(), largest)
		return rows, pages
	}

	rows, err := shard.Query(ctx, `SELECT order_id || '/' || id FROM tickets WHERE event_id = $1 ORDER BY order_id, id`, e.ID)
	require.NoError(t, err)
	want, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Len(t, want, 80000)

	attendees, pages := export("/api/events/" + strconv.FormatInt(e.ID, 10) + "/attendees.csv")
	require.Greater(t, pages, 1)
	require.Equal(t, "ticket_id", attendees[0][0])
	var got []string
	for _, row := range attendees[1:] {
		got = append(got, row[1]+"/"+row[0])
	}
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i], got[i], "row %d: every ticket once, in order", i+1)
	}
	for _, row := range attendees[1:] {
		require.Contains(t, []string{`'=HYPERLINK("http://evil.example")`, `Bia "B", da Silva`}, row[7], "cells are quoted and defused")
	}

	orders, _ := export("/api/events/" + strconv.FormatInt(e.ID, 10) + "/orders.csv")
	require.Len(t, orders, 1+20000)
	require.True(t, slices.IsSortedFunc(orders[1:], func(x, y []string) int {
		a, _ := strconv.ParseInt(x[0], 10, 64)
		b, _ := strconv.ParseInt(y[0], 10, 64)
		return int(a - b)
	}))
}
