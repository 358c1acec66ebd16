package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/catraca/catraca/shared/app"
	"github.com/catraca/catraca/shared/availability"
	"github.com/catraca/catraca/shared/cache"
	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/searchindex"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
	"github.com/catraca/catraca/tools/loadstat"
)

// bigEvent creates an on-sale event on a 50,000-seat stadium with a third
// of the seats held, so the bitset is not trivially compressible.
func bigEvent(b *testing.B, a *app.App) event.Event {
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Big Stadium", "Rio de Janeiro", 50000, 10000))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	e, err := org.CreateEvent(ctx, 0, organizer.EventSpec{VenueID: l.VenueID, LayoutVersion: l.Version, Name: "Big Show",
		StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(47 * time.Hour),
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 1}, {Code: "B", PriceCents: 1}, {Code: "C", PriceCents: 1}, {Code: "GA", PriceCents: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	pool, _ := a.Shards.Pool(e.Shard)
	if _, err := pool.Exec(ctx, `UPDATE event_seats SET status = 'held', held_until = now() + interval '1 hour', hold_id = 1
		WHERE event_id = $1 AND random() < 0.33`, e.ID); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkAvailability measures the snapshot of a 50,000-seat event: its
// size, its build time, requests served from the cache, and how many
// builds (database reads) a burst of 10,000 concurrent requests spread over
// four API instances causes.
func BenchmarkAvailability(b *testing.B) {
	a := apptest.New(b, 1)
	e := bigEvent(b, a)
	ctx := context.Background()
	b.Run("build-50k-seats", func(b *testing.B) {
		for range b.N {
			start := time.Now()
			snap, err := a.Availability.Build(ctx, e.ID, e.Shard)
			if err != nil {
				b.Fatal(err)
			}
			elapsed := time.Since(start)
			raw, _ := json.Marshal(snap)
			var gz bytes.Buffer
			w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
			w.Write(raw)
			w.Close()
			b.ReportMetric(float64(elapsed.Microseconds())/1000, "build-ms")
			b.ReportMetric(float64(len(raw))/1024, "json-KB")
			b.ReportMetric(float64(gz.Len())/1024, "gzip-KB")
		}
	})
	srv := httptest.NewServer(a.Handler())
	b.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
	url := fmt.Sprintf("%s/api/events/%d/availability", srv.URL, e.ID)
	b.Run("cached-requests/clients=64", func(b *testing.B) {
		for range b.N {
			r := loadstat.Run(64, 20000, func(int) error {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				res, err := client.Do(req)
				if err != nil {
					return err
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return nil
			})
			loadstat.Report(b, r, "ops")
		}
	})
	b.Run("burst-10k-over-4-instances", func(b *testing.B) {
		for i := range b.N {
			// Four API instances: their own in-process caches, one Redis.
			prefix := fmt.Sprintf("burst%d:%d:", time.Now().UnixNano(), i)
			var caches []*cache.Cache
			var services []*availability.Service
			for range 4 {
				c := cache.New(a.Redis, prefix)
				caches = append(caches, c)
				services = append(services, availability.New(a.Shards, c))
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for n := range 10000 {
				wg.Go(func() {
					<-start
					if _, _, err := services[n%4].Get(ctx, e.ID, e.Shard); err != nil {
						b.Error(err)
					}
				})
			}
			close(start)
			wg.Wait()
			var builds int64
			for _, c := range caches {
				builds += c.Builds.Load()
			}
			b.ReportMetric(float64(builds), "db-queries")
		}
	})
}

// searchMix is a realistic mix of what people type, by kind; %d is an event
// number, so exact names and prefixes vary across the 100,000 events.
var searchMix = []struct {
	kind, query, city string
}{
	{"exact", "%d", ""},
	{"exact", "%d", ""},
	{"prefix", "sinfonia de ver", ""},
	{"prefix", "auro", ""},
	{"prefix", "rock sess", ""},
	{"typo", "festval", ""},
	{"typo", "sinfonai de verao", ""},
	{"typo", "classcio", ""},
	{"accents", "forró brasileira", ""},
	{"accents", "OPERA ACUSTICO", ""},
	{"city", "jazz", "Recife"},
	{"city", "noite", "São Paulo"},
	{"no-match", "xyzzy", ""},
	{"no-match", "metallica", ""},
}

// benchNameWords make the names of BenchmarkSearch's events: event g is
// called words[0][g%10] words[1][(g/10)%8] g.
var benchNameWords = [2][]string{
	{"Aurora", "Sinfonia", "Festival", "Noite", "Jazz", "Rock", "Samba", "Forró", "Ópera", "Clássico"},
	{"Tour", "ao Vivo", "de Verão", "Brasileira", "Session", "Experience", "Especial", "Acústico"},
}

func benchEventName(g int) string {
	return fmt.Sprintf("%s %s %d", benchNameWords[0][g%10], benchNameWords[1][(g/10)%8], g)
}

// BenchmarkSearch compares search over 100,000 events (the mix above) with
// a primary-key read of one event, both through event.Directory (what the
// listing and event handlers read through) with no result cache in front,
// in the same run at the same concurrency. Search goes through the
// in-memory index as in production (index-load-ms and index-MB are its
// cold start and its heap); pg-p50-ms and pg-p99-ms are the same mix
// answered by PostgreSQL alone, in the same run.
func BenchmarkSearch(b *testing.B) {
	a := apptest.New(b, 1, func(c *config.Config) { c.SearchIndex = true })
	ctx := context.Background()
	org := organizer.New(a.Catalog, a.Shards)
	l, err := org.ImportLayout(ctx, 0, venue.Stadium("Estádio do Maracanã", "Rio de Janeiro", 100, 10))
	if err != nil {
		b.Fatal(err)
	}
	var first int64
	err = a.Catalog.QueryRow(ctx, `
		WITH ins AS (
		INSERT INTO events (venue_id, layout_version, shard_id, name, category, city, description, starts_at, sale_starts_at, sale_ends_at, status)
		SELECT $1, $2, 1,
		  ($3::text[])[1 + g % 10] || ' ' || ($4::text[])[1 + (g / 10) % 8] || ' ' || g,
		  (ARRAY['music','sports','comedy','classical'])[1 + g % 4],
		  (ARRAY['Rio de Janeiro','São Paulo','Belo Horizonte','Salvador','Recife','Porto Alegre'])[1 + g % 6],
		  'event number ' || g, now() + g * interval '1 minute', now() - interval '1 day', now() + g * interval '1 minute', 'on_sale'
		FROM generate_series(1, 100000) g RETURNING id)
		SELECT min(id) FROM ins`, l.VenueID, l.Version, benchNameWords[0], benchNameWords[1]).Scan(&first)
	if err != nil {
		b.Fatal(err)
	}
	a.Catalog.Exec(ctx, `ANALYZE`)
	load, heap := indexLoad(b, a.SearchIndex)
	pg := event.NewDirectory(a.CatalogRO)
	mix := func(dir *event.Directory, ops int) loadstat.Result {
		return loadstat.Run(4, ops, func(seq int) error {
			m := searchMix[seq%len(searchMix)]
			q := m.query
			if q == "%d" {
				q = benchEventName(1 + (seq*7919)%100000)
			}
			_, err := dir.List(ctx, event.Filter{Query: q, City: m.city, Limit: 20})
			return err
		})
	}
	const ops = 700
	for range b.N {
		viaPG := mix(pg, ops)
		// Searches keep the index fresh in production; here none ran
		// through it while PostgreSQL answered.
		if err := a.SearchIndex.Refresh(ctx); err != nil {
			b.Fatal(err)
		}
		search := mix(a.Events, ops)
		if !a.SearchIndex.Ready() {
			b.Fatal("the search index went stale during the run: PostgreSQL answered part of it")
		}
		pk := loadstat.Run(4, ops, func(seq int) error {
			_, err := a.Events.Get(ctx, first+int64((seq*7919)%100000))
			return err
		})
		loadstat.Report(b, search, "ops")
		b.ReportMetric(float64(pk.P50.Microseconds())/1000, "pk-p50-ms")
		b.ReportMetric(float64(pk.P99.Microseconds())/1000, "pk-p99-ms")
		b.ReportMetric(float64(viaPG.P50.Microseconds())/1000, "pg-p50-ms")
		b.ReportMetric(float64(viaPG.P99.Microseconds())/1000, "pg-p99-ms")
		b.ReportMetric(float64(load.Microseconds())/1000, "index-load-ms")
		b.ReportMetric(heap, "index-MB")
		if search.Errors+pk.Errors+viaPG.Errors > 0 {
			b.Fatalf("%d search, %d read and %d PostgreSQL search errors", search.Errors, pk.Errors, viaPG.Errors)
		}
	}
}

// indexLoad loads the search index from the catalog and returns how long
// that took and how much heap the loaded index holds.
func indexLoad(b *testing.B, x *searchindex.Index) (time.Duration, float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	if err := x.Refresh(context.Background()); err != nil {
		b.Fatal(err)
	}
	load := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	return load, float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
}
