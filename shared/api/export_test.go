package api_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/demo"
	"github.com/catraca/catraca/tools/pspsim"
)

// exportShop is an organizer's event with buyers, on a one-shard app.
type exportShop struct {
	app    *app.App
	org    *fan
	event  int64
	buyers []int64
}

func newExportShop(t *testing.T, options ...func(*config.Config)) *exportShop {
	a := apptest.New(t, 1, options...)
	srv := serve(t, a)
	s := &exportShop{app: a, org: organizerFan(t, a, srv)}
	s.event = createEvent(t, s.org, importVenue(t, s.org, venue.Stadium("Export Arena", "Recife", 40, 500)), "Export Night", false)
	for _, email := range []string{"ana@example.com", "bia@example.com", "caio@example.com"} {
		s.buyers = append(s.buyers, newFan(t, srv).signUp(email))
	}
	return s
}

// sell writes paid orders of tickets places each.
func (s *exportShop) sell(t testing.TB, orders, tickets int) {
	t.Helper()
	pool, err := s.app.Shards.ForEvent(context.Background(), s.event)
	require.NoError(t, err)
	require.NoError(t, demo.BulkOrders(context.Background(), pool, s.event, s.buyers, orders, tickets))
}

// shard runs q on the event's shard.
func (s *exportShop) shard(t testing.TB, q string) {
	t.Helper()
	pool, err := s.app.Shards.ForEvent(context.Background(), s.event)
	require.NoError(t, err)
	_, err = pool.Exec(context.Background(), q)
	require.NoError(t, err)
}

var nextLink = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// exportAll follows an export's pages from first, checking each, and
// returns their bodies appended and how many pages there were.
func (s *exportShop) exportAll(t testing.TB, first string) (string, int) {
	t.Helper()
	var all strings.Builder
	pages := 0
	for path := first; path != ""; pages++ {
		r := s.org.do(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
		require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
		require.LessOrEqual(t, len(r.Raw), 768<<10, "a page fits a buffered Lambda response, escaped in JSON")
		require.Equal(t, pages == 0, r.Header.Get("Export-Total-Orders") != "", "the first page tells the total")
		all.Write(r.Raw)
		path = ""
		if link := r.Header.Get("Link"); link != "" {
			m := nextLink.FindStringSubmatch(link)
			require.NotNil(t, m, link)
			path = m[1]
		}
	}
	return all.String(), pages
}

func parseCSV(t testing.TB, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	require.NoError(t, err)
	return rows
}

// An export comes a page at a time, each small enough for a buffered
// Lambda response; the pages appended are the whole file: one header,
// every ticket once, in order, even while orders are being written.
func TestExportPagesMakeTheWholeFile(t *testing.T) {
	t.Parallel()
	s := newExportShop(t)
	s.sell(t, 2000, 6) // about 1 MB of attendees: more than one page by size
	pool, err := s.app.Shards.ForEvent(context.Background(), s.event)
	require.NoError(t, err)
	rows, err := pool.Query(context.Background(), `SELECT id::text FROM tickets WHERE event_id = $1`, s.event)
	require.NoError(t, err)
	before, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	base := "/api/events/" + itoa(s.event)

	bySize, pages := s.exportAll(t, base+"/attendees.csv")
	require.Greater(t, pages, 1, "a page ends before its size limit even under the order limit")
	require.Len(t, parseCSV(t, bySize), 1+12000)

	// Orders keep coming during an export: pages never repeat or skip.
	stop := make(chan struct{})
	var writers sync.WaitGroup
	var writeErr error
	writers.Go(func() {
		for writeErr == nil {
			select {
			case <-stop:
				return
			default:
				writeErr = demo.BulkOrders(context.Background(), pool, s.event, s.buyers, 3, 2)
			}
		}
	})
	all, pages := s.exportAll(t, base+"/attendees.csv?limit=97")
	close(stop)
	writers.Wait()
	require.NoError(t, writeErr)
	require.Greater(t, pages, 2000/97)
	got := parseCSV(t, all)
	require.Equal(t, "ticket_id", got[0][0], "one header, on the first page")
	seen := map[string]bool{}
	var orders []int64
	for _, row := range got[1:] {
		require.False(t, seen[row[0]], "ticket %s twice", row[0])
		seen[row[0]] = true
		id, err := strconv.ParseInt(row[1], 10, 64)
		require.NoError(t, err)
		orders = append(orders, id)
	}
	require.True(t, slices.IsSorted(orders), "rows in order id order")
	for _, id := range before {
		require.True(t, seen[id], "ticket %s sold before the export is in it", id)
	}

	var total int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM orders WHERE event_id = $1`, s.event).Scan(&total))
	require.Greater(t, total, 2000, "orders were written during the export")
	orderRows, _ := s.exportAll(t, base+"/orders.csv")
	require.Len(t, parseCSV(t, orderRows), 1+total, "a line per order")

	for _, q := range []string{"?after=0", "?after=x", "?limit=0", "?limit=2001"} {
		requireProblem(t, s.org.do(http.MethodGet, base+"/orders.csv"+q, nil), http.StatusBadRequest, "invalid-parameter")
	}
}

// A page that cannot be read is a problem response that can be asked
// again, never a cut connection (which on Lambda ends the process): the
// first page when the shard's reader is down is a 503 to retry.
func TestExportFailuresAreProblems(t *testing.T) {
	t.Parallel()
	down := newExportShop(t, func(c *config.Config) {
		c.ShardReads = map[int]string{1: "postgres://catraca:secret@127.0.0.1:1/gone?connect_timeout=1"}
	})
	r := down.org.do(http.MethodGet, "/api/events/"+itoa(down.event)+"/orders.csv", nil)
	requireProblem(t, r, http.StatusServiceUnavailable, "temporarily-unavailable")
	require.NotEmpty(t, r.Header.Get("Retry-After"))

	s := newExportShop(t)
	s.sell(t, 3, 2)
	first := s.org.do(http.MethodGet, "/api/events/"+itoa(s.event)+"/attendees.csv?limit=2", nil)
	require.Equal(t, http.StatusOK, first.Status)
	next := nextLink.FindStringSubmatch(first.Header.Get("Link"))
	require.NotNil(t, next)
	s.shard(t, `ALTER TABLE tickets RENAME TO tickets_away`)
	requireProblem(t, s.org.do(http.MethodGet, next[1], nil), http.StatusInternalServerError, "internal")
	s.shard(t, `ALTER TABLE tickets_away RENAME TO tickets`)
	again := s.org.do(http.MethodGet, next[1], nil)
	require.Equal(t, http.StatusOK, again.Status, "the same page, asked again")
	require.Len(t, parseCSV(t, string(first.Raw)+string(again.Raw)), 1+6)
}

// The attendee list names who holds each ticket now, as the door's scan
// does, beside its buyer: after a transfer it named only the buyer
// (outsider's entry.py). Names stay formula-safe.
func TestAttendeesNameTheHolder(t *testing.T) {
	t.Parallel()
	s := newShop(t, pspsim.Faults{})
	ana := newFan(t, s.srv)
	ana.signUp("ana@example.com")
	newFan(t, s.srv).signUp("bia@example.com")
	s.named(t, "bia@example.com", "=Bia")
	s.paidTickets(t, ana, "a", s.seats[0], s.seats[1])
	ids, _ := myCodes(t, ana) // keys the tickets under ana's name
	r := ana.do(http.MethodPost, "/api/tickets/"+itoa(ids[0])+"/transfer", map[string]any{"email": "bia@example.com"})
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))

	r = s.organizerOf(t).do(http.MethodGet, "/api/events/"+itoa(s.eventID)+"/attendees.csv", nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Raw))
	rows := parseCSV(t, string(r.Raw))
	require.Equal(t, []string{"buyer_email", "buyer_name", "holder_email", "holder_name"}, rows[0][6:10])
	people := map[string][]string{}
	for _, row := range rows[1:] {
		people[row[0]] = row[6:10]
	}
	require.Equal(t, map[string][]string{
		itoa(ids[0]): {"ana@example.com", "Fan", "bia@example.com", "'=Bia"},
		itoa(ids[1]): {"ana@example.com", "Fan", "ana@example.com", "Fan"},
	}, people)
}

// An export's times are the event's local times with their offset (the
// venue's time zone), so a box office reads them as its clock does; the
// instants are the orders' own.
func TestExportTimesInTheEventsZone(t *testing.T) {
	t.Parallel()
	s := newExportShop(t)
	_, err := s.app.Catalog.Exec(context.Background(),
		`UPDATE venues SET timezone = 'Asia/Kolkata' WHERE id = (SELECT venue_id FROM events WHERE id = $1)`, s.event)
	require.NoError(t, err)
	s.sell(t, 1, 1)
	pool, err := s.app.Shards.ForEvent(context.Background(), s.event)
	require.NoError(t, err)
	var created, paid time.Time
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT created_at, paid_at FROM orders WHERE event_id = $1`, s.event).Scan(&created, &paid))

	all, _ := s.exportAll(t, "/api/events/"+itoa(s.event)+"/orders.csv")
	rows := parseCSV(t, all)
	require.Equal(t, []string{"created_at", "paid_at"}, rows[0][7:9])
	for i, want := range []time.Time{created, paid} {
		cell := rows[1][7+i]
		require.True(t, strings.HasSuffix(cell, "+05:30"), "%s in the venue's zone with its offset: %q", rows[0][7+i], cell)
		got, err := time.Parse(time.RFC3339, cell)
		require.NoError(t, err)
		require.True(t, want.Truncate(time.Second).Equal(got), "%s is the order's instant: %s, want %s", rows[0][7+i], got, want)
	}
}
