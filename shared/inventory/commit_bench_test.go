package inventory_test

import (
	"context"
	"testing"

	"github.com/catraca/catraca/tools/loadstat"
)

// BenchmarkCommitLatency measures what one commit costs in this database:
// one client, one single-row UPDATE per transaction. Under the commit delay
// mode (CATRACA_TEST_COMMIT_DELAY) it shows the latency that mode gives.
func BenchmarkCommitLatency(b *testing.B) {
	f := newFixture(b, 100, 100)
	b.Run("one-row/commits", func(b *testing.B) {
		for range b.N {
			r, err := loadstat.CommitLatency(context.Background(), f.shard, 300)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(r.P50.Microseconds())/1000, "commit-p50-ms")
			b.ReportMetric(float64(r.P99.Microseconds())/1000, "commit-p99-ms")
			b.ReportMetric(r.PerSec, "commits/s")
		}
	})
}
