package searchindex_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/searchindex"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// nameWords, cities and venues make generated catalogs: few words, so
// queries share words with many events, accents, and names that are
// prefixes of one another.
var (
	nameWords = []string{"Aurora", "Ópera", "Festival", "Forró", "Jazz", "Rock", "Roça", "Samba", "Noite", "Sinfonia",
		"Clássico", "Tour", "Verão", "Acústico", "Session", "Brasileira", "de", "ao", "Vivo", "Stand-up", "Fest", "São"}
	cities     = []string{"Rio de Janeiro", "São Paulo", "Recife", "Salvador"}
	categories = []string{"music", "sports", "comedy", "classical"}
	statuses   = []string{"draft", "scheduled", "on_sale", "closed", "cancelled", "sold_out"}
)

type catalogDB struct {
	pool   *pgxpool.Pool
	venues [2]venue.Layout
}

func newCatalog(t *testing.T) catalogDB {
	a := apptest.New(t, 1)
	org := organizer.New(a.Catalog, a.Shards)
	var c catalogDB
	for i, name := range []string{"Estádio do Maracanã", "Arena Fonte Nova"} {
		l, err := org.ImportLayout(context.Background(), 0, venue.Stadium(name, cities[i], 10, 5))
		require.NoError(t, err)
		c.venues[i] = l
	}
	c.pool = a.Catalog
	return c
}

type genEvent struct {
	name, category, city, description, status string
	venue, startMinute, saleFrom, saleTo      int
}

func (c catalogDB) insert(ctx context.Context, e genEvent) (int64, error) {
	l := c.venues[e.venue]
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Now()
	var id int64
	err := c.pool.QueryRow(ctx, `INSERT INTO events (venue_id, layout_version, shard_id, name, category, city, description,
		starts_at, sale_starts_at, sale_ends_at, status) VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		l.VenueID, l.Version, e.name, e.category, e.city, e.description, base.Add(time.Duration(e.startMinute)*time.Minute),
		now.Add(time.Duration(e.saleFrom)*time.Hour), now.Add(time.Duration(e.saleTo)*time.Hour), e.status).Scan(&id)
	return id, err
}

func drawEvent(t *rapid.T) genEvent {
	n := rapid.IntRange(1, 4).Draw(t, "words")
	var name []string
	for range n {
		name = append(name, rapid.SampledFrom(nameWords).Draw(t, "word"))
	}
	if rapid.Bool().Draw(t, "numbered") {
		name = append(name, fmt.Sprint(rapid.IntRange(1, 300).Draw(t, "number")))
	}
	desc := ""
	if rapid.Bool().Draw(t, "described") {
		desc = rapid.SampledFrom(nameWords).Draw(t, "desc") + " " + rapid.SampledFrom([]string{"ao vivo", "especial", "night"}).Draw(t, "desc2")
	}
	from := rapid.IntRange(-48, 48).Draw(t, "saleFrom")
	return genEvent{name: strings.Join(name, " "), category: rapid.SampledFrom(categories).Draw(t, "category"),
		city: rapid.SampledFrom(cities).Draw(t, "city"), description: desc, status: rapid.SampledFrom(statuses).Draw(t, "status"),
		venue: rapid.IntRange(0, 1).Draw(t, "venue"), startMinute: rapid.IntRange(0, 20).Draw(t, "start"),
		saleFrom: from, saleTo: from + rapid.IntRange(1, 96).Draw(t, "saleLength")}
}

// unaccented drops the accents nameWords and cities have.
var unaccented = strings.NewReplacer("á", "a", "ã", "a", "é", "e", "ó", "o", "ç", "c", "Ó", "O")

// drawQuery is what a person might type about the catalog: a name as
// written, folded or shouted; a name being typed; loose words; a typo.
func drawQuery(t *rapid.T, evs []genEvent) string {
	e := rapid.SampledFrom(evs).Draw(t, "about")
	ws := strings.Fields(e.name)
	switch rapid.IntRange(0, 4).Draw(t, "kind") {
	case 0:
		return rapid.SampledFrom([]string{e.name, strings.ToLower(unaccented.Replace(e.name)), strings.ToUpper(e.name)}).Draw(t, "exact")
	case 1:
		k := rapid.IntRange(0, len(ws)-1).Draw(t, "typed")
		r := []rune(ws[k])
		return strings.Join(append(ws[:k:k], string(r[:rapid.IntRange(1, len(r)).Draw(t, "cut")])), " ")
	case 2:
		return rapid.SampledFrom(nameWords).Draw(t, "w1") + " " + rapid.SampledFrom(append(cities, "maracana", "fonte", "night")).Draw(t, "w2")
	case 3:
		r := []rune(rapid.SampledFrom(nameWords).Draw(t, "misspelt"))
		i := rapid.IntRange(0, len(r)-1).Draw(t, "at")
		if rapid.Bool().Draw(t, "drop") || i == len(r)-1 {
			return string(append(r[:i:i], r[i+1:]...))
		}
		r[i], r[i+1] = r[i+1], r[i]
		return string(r)
	default:
		return rapid.SampledFrom([]string{"xyzzy", "!!!", "de", "1", "12", "tour 2", "são paulo", "ópera de"}).Draw(t, "odd")
	}
}

func drawFilter(t *rapid.T, q string) event.Filter {
	f := event.Filter{Query: q, Limit: rapid.IntRange(1, 8).Draw(t, "limit")}
	if rapid.IntRange(0, 3).Draw(t, "city?") == 0 {
		f.City = rapid.SampledFrom(append(cities, "sao paulo", "RECIFE", "Lisboa")).Draw(t, "cityFilter")
	}
	if rapid.IntRange(0, 4).Draw(t, "category?") == 0 {
		f.Category = rapid.SampledFrom(categories).Draw(t, "categoryFilter")
	}
	f.OnSaleNow = rapid.IntRange(0, 4).Draw(t, "onSale?") == 0
	f.OpensSoon = rapid.IntRange(0, 4).Draw(t, "opensSoon?") == 0
	if rapid.IntRange(0, 4).Draw(t, "window?") == 0 {
		base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		f.From = base.Add(time.Duration(rapid.IntRange(0, 10).Draw(t, "from")) * time.Minute)
		f.To = f.From.Add(time.Duration(rapid.IntRange(1, 10).Draw(t, "to")) * time.Minute)
	}
	return f
}

// TestIndexAgreesWithPostgreSQL generates catalogs and queries and asks
// both paths: the index must read the query as search_query does (same
// words kept, prefixed, corrected; a tie between equally similar
// corrections may go either way) and return the same events in the same
// order, page after page: name matches first, then soonest; filters
// honoured; drafts never.
func TestIndexAgreesWithPostgreSQL(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	ctx := context.Background()
	pg := event.NewDirectory(c.pool)
	rapid.Check(t, func(t *rapid.T) {
		_, err := c.pool.Exec(ctx, `DELETE FROM events; TRUNCATE search_words`)
		require.NoError(t, err)
		evs := rapid.SliceOfN(rapid.Custom(drawEvent), 1, 30).Draw(t, "events")
		for _, e := range evs {
			_, err := c.insert(ctx, e)
			require.NoError(t, err)
		}
		x := searchindex.New(c.pool, searchindex.Options{})
		require.NoError(t, x.Refresh(ctx))
		require.True(t, x.Ready())
		idx := pg.WithSearchIndex(x)
		for range rapid.IntRange(1, 12).Draw(t, "queries") {
			f := drawFilter(t, drawQuery(t, evs))
			if !sameReading(t, c.pool, x, f.Query) {
				continue
			}
			for page := 0; ; page++ {
				want, err := pg.List(ctx, f)
				require.NoError(t, err)
				got, err := idx.List(ctx, f)
				require.NoError(t, err)
				require.Equal(t, ids(want), ids(got), "page %d of %+v", page, f)
				require.Equal(t, want.Next, got.Next, "next cursor of page %d of %+v", page, f)
				if want.Next == "" {
					break
				}
				f.Cursor = want.Next
			}
		}
	})
}

// sameReading compares how PostgreSQL and the index read typed text; it
// returns false, for a tie between two equally similar corrections, when
// the two readings may differ and still both be right.
func sameReading(t *rapid.T, db *pgxpool.Pool, x *searchindex.Index, q string) bool {
	var pgq string
	require.NoError(t, db.QueryRow(context.Background(), `SELECT coalesce(search_query($1, '')::text, '')`, q).Scan(&pgq))
	got := x.TSQuery(q)
	if got == pgq {
		return true
	}
	pw, gw := strings.Split(pgq, " & "), strings.Split(got, " & ")
	typed := strings.FieldsFunc(x.Fold(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	require.Len(t, gw, len(pw), "index reads %q as %s, PostgreSQL as %s", q, got, pgq)
	for i := range pw {
		if pw[i] == gw[i] {
			continue
		}
		var tie bool
		require.NoError(t, db.QueryRow(context.Background(), `SELECT similarity(trim($1, ''''), $3) = similarity(trim($2, ''''), $3)`,
			pw[i], gw[i], typed[i]).Scan(&tie))
		require.True(t, tie, "index reads %q as %s, PostgreSQL as %s", q, got, pgq)
	}
	return false
}

func ids(p event.Page) []int64 {
	out := []int64{}
	for _, e := range p.Events {
		out = append(out, e.ID)
	}
	return out
}

// TestIndexFollowsTheCatalog: a new, edited or cancelled event, or a
// renamed venue, reaches search at the next refresh, which a search
// triggers once the index is older than its interval; past MaxStale the
// index declines and PostgreSQL answers. The clock is injected.
func TestIndexFollowsTheCatalog(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	x := searchindex.New(c.pool, searchindex.Options{Interval: time.Second, MaxStale: 10 * time.Second, Now: clock})
	dir := event.NewDirectory(c.pool).WithSearchIndex(x)
	search := func(q string) []string {
		p, err := dir.List(ctx, event.Filter{Query: q, Limit: 20})
		require.NoError(t, err)
		var out []string
		for _, e := range p.Events {
			out = append(out, e.Name+"/"+string(e.Status))
		}
		return out
	}
	_, ok := x.Search(searchindex.Query{Text: "aurora", Limit: 20})
	require.False(t, ok, "not loaded: PostgreSQL answers")
	aurora, err := c.insert(ctx, genEvent{name: "Aurora Tour", category: "music", city: "Recife", status: "on_sale", saleFrom: -1, saleTo: 5})
	require.NoError(t, err)
	require.NoError(t, x.Refresh(ctx))
	require.Equal(t, []string{"Aurora Tour/on_sale"}, search("aurora"))

	// Changes reach the index at the next refresh, not before.
	_, err = c.insert(ctx, genEvent{name: "Aurora Especial", category: "music", city: "Recife", status: "scheduled", startMinute: 5, saleFrom: 1, saleTo: 5})
	require.NoError(t, err)
	_, err = c.pool.Exec(ctx, `UPDATE events SET name = 'Samba de Roda' WHERE id = $1`, aurora)
	require.NoError(t, err)
	require.Equal(t, []string{"Samba de Roda/on_sale"}, search("aurora"), "stale ids, fresh rows")
	advance(time.Second)
	require.Eventually(t, func() bool { // the search itself triggered the refresh
		got := search("aurora")
		return len(got) == 1 && got[0] == "Aurora Especial/scheduled"
	}, time.Minute, 10*time.Millisecond)
	require.Equal(t, []string{"Samba de Roda/on_sale"}, search("samba"))

	// Cancelled: still listed, as cancelled; a renamed venue re-indexes.
	_, err = c.pool.Exec(ctx, `UPDATE events SET status = 'cancelled' WHERE id = $1`, aurora)
	require.NoError(t, err)
	_, err = c.pool.Exec(ctx, `UPDATE venues SET name = 'Arena Pernambuco' WHERE id = $1`, c.venues[0].VenueID)
	require.NoError(t, err)
	require.NoError(t, x.Refresh(ctx))
	require.Equal(t, []string{"Samba de Roda/cancelled"}, search("samba pernambuco"))
	require.Empty(t, search("samba maracana"))

	// More changes than one refresh applies in place: a reload.
	_, err = c.pool.Exec(ctx, `INSERT INTO events (venue_id, layout_version, shard_id, name, category, city, starts_at, sale_starts_at, sale_ends_at, status)
		SELECT $1, $2, 1, 'Bulk Import ' || g, 'music', 'Recife', now(), now(), now() + interval '1 day', 'scheduled'
		FROM generate_series(1, 2500) g`, c.venues[1].VenueID, c.venues[1].Version)
	require.NoError(t, err)
	require.NoError(t, x.Refresh(ctx))
	require.Equal(t, []string{"Bulk Import 2500/scheduled"}, search("bulk import 2500"))
	require.Equal(t, []string{"Samba de Roda/cancelled"}, search("samba"))

	// Past MaxStale (refreshes failing or not run), PostgreSQL answers.
	advance(11 * time.Second)
	_, ok = x.Search(searchindex.Query{Text: "samba", Limit: 20})
	require.False(t, ok)
	require.Equal(t, []string{"Samba de Roda/cancelled"}, search("samba"))
}

// TestLexemesAsPostgreSQLSplitsThem reads tsvector text as PostgreSQL's
// own unnest() does: quotes and backslashes, weights, no positions.
func TestLexemesAsPostgreSQLSplitsThem(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	for _, v := range []string{
		`setweight(to_tsvector('simple', 'Aurora Tour 2024 stand-up'), 'A') || to_tsvector('simple', 'aurora de verão')`,
		`$$'it''s':1A 'back\\slash':2B 'plain' 'two':3,4A 'é':5C$$::tsvector`,
		`''::tsvector`,
	} {
		var text string
		var name, other []string
		require.NoError(t, c.pool.QueryRow(context.Background(), `SELECT (`+v+`)::text,
			ARRAY(SELECT u.lexeme FROM unnest(`+v+`) u WHERE 'A' = ANY (u.weights)),
			ARRAY(SELECT u.lexeme FROM unnest(`+v+`) u WHERE NOT coalesce('A' = ANY (u.weights), false))`).Scan(&text, &name, &other))
		gotName, gotOther, err := searchindex.Lexemes(text)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprint(name), fmt.Sprint(gotName), text)
		require.Equal(t, fmt.Sprint(other), fmt.Sprint(gotOther), text)
	}
}

// TestFoldAsTheCatalogFolds: every Latin, Greek and Cyrillic letter or
// mark folds as the catalog's search_normalize folds it (lower(unaccent())),
// so typed accents and city filters read the same in both paths.
func TestFoldAsTheCatalogFolds(t *testing.T) {
	t.Parallel()
	c := newCatalog(t)
	x := searchindex.New(c.pool, searchindex.Options{})
	require.NoError(t, x.Refresh(context.Background()))
	var letters []string
	for _, rg := range [][2]rune{{0x20, 0x4ff}, {0x1e00, 0x1eff}} {
		for r := rg[0]; r <= rg[1]; r++ {
			if unicode.IsLetter(r) || unicode.Is(unicode.Mn, r) {
				letters = append(letters, string(r))
			}
		}
	}
	letters = append(letters, "Forró São JOÃO Ångström")
	var folded []string
	require.NoError(t, c.pool.QueryRow(context.Background(), `SELECT array_agg(search_normalize(l) ORDER BY n)
		FROM unnest($1::text[]) WITH ORDINALITY AS t(l, n)`, letters).Scan(&folded))
	var differ []string
	for i, l := range letters {
		if got := x.Fold(l); got != folded[i] {
			differ = append(differ, fmt.Sprintf("%s (U+%04X): %q, catalog %q", l, []rune(l)[0], got, folded[i]))
		}
	}
	require.Empty(t, differ)
}
