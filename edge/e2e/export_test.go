package e2e

import (
	"context"
	"encoding/csv"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/tools/demo"
)

// TestExportDownloadsEveryPage: the console fetches an export a page at a
// time (three pages here, asked small with export_limit) and saves one
// file with the header once and every ticket of the event.
func TestExportDownloadsEveryPage(t *testing.T) {
	s := newSite(t)
	id := s.event(t, "Export Night", false, 480)
	ctx := context.Background()
	buyer, err := s.st.App.Accounts.SignUp(ctx, "export-buyer@catraca.dev", "a-long-password", `Bia "B", da Silva`)
	require.NoError(t, err)
	shard, err := s.st.App.Shards.ForEvent(ctx, id)
	require.NoError(t, err)
	require.NoError(t, demo.BulkOrders(ctx, shard, id, []int64{buyer.ID}, 7, 2))
	rows, err := shard.Query(ctx, `SELECT id::text FROM tickets WHERE event_id = $1`, id)
	require.NoError(t, err)
	tickets, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	want := map[string]bool{}
	for _, ticket := range tickets {
		want[ticket] = true
	}
	require.Len(t, want, 14)

	org := s.tabOf(t, s.newBrowser(t))
	dir := t.TempDir()
	s.logInOrganizer(t, org, url.QueryEscape("/organizer/orders?export_limit=3"))
	saved := make(chan string, 1)
	require.NoError(t, chromedp.Listen(org, func(ev any) {
		if p, ok := ev.(*browser.EventDownloadProgress); ok && p.State == browser.DownloadProgressStateCompleted {
			select {
			case saved <- p.GUID:
			default:
			}
		}
	}))
	events := true
	_, err = chromedp.Call(org, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(org,
		chromedp.WaitVisible(`//h1[. = "Orders"]`),
		chromedp.Click(`//li[contains(., "Export Night")]//button[contains(., "Attendees CSV")]`),
		chromedp.WaitVisible(`//p[@role="status" and contains(., "saved as event-`+strconv.FormatInt(id, 10)+`-attendees.csv")]`),
	))
	var guid string
	select {
	case guid = <-saved:
	case <-org.Done():
		t.Fatal("no download")
	}
	require.Equal(t, 3, evaluate[int](t, org, `performance.getEntriesByType('resource').filter((e) => e.name.includes('attendees.csv')).length`),
		"7 orders at 3 a page")
	f, err := os.Open(filepath.Join(dir, guid))
	require.NoError(t, err)
	defer f.Close()
	got, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "ticket_id", got[0][0])
	require.Len(t, got, 1+14)
	for _, row := range got[1:] {
		require.True(t, want[row[0]], "ticket %s", row[0])
		delete(want, row[0])
		require.Equal(t, `Bia "B", da Silva`, row[7])
	}
	require.Empty(t, want, "every ticket once")
	accessible(t, org, "exports")
}
