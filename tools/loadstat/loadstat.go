// Package loadstat runs a fixed amount of work over N concurrent clients
// and reports throughput and latency percentiles, for benchmarks that must
// compare a system against a baseline measured in the same run.
package loadstat

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Result is what one run measured.
type Result struct {
	Ops      int
	Errors   int
	Elapsed  time.Duration
	PerSec   float64
	P50, P99 time.Duration
}

// Run calls op total times spread over clients goroutines; op receives a
// unique sequence number. Failed ops count as errors and are excluded from
// latencies.
func Run(clients, total int, op func(seq int) error) Result {
	return run(clients, func(seq int) bool { return seq < total }, op)
}

// RunFor calls op over clients goroutines until d has passed, so that
// strategies of very different speeds are sampled for the same time; ops
// in flight at the deadline finish and count.
func RunFor(clients int, d time.Duration, op func(seq int) error) Result {
	deadline := time.Now().Add(d)
	return run(clients, func(int) bool { return time.Now().Before(deadline) }, op)
}

// run calls op with sequence numbers from 0 while more allows.
func run(clients int, more func(seq int) bool, op func(seq int) error) Result {
	var next, done atomic.Int64
	lat := make([][]time.Duration, clients)
	var errs atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for {
				seq := int(next.Add(1)) - 1
				if !more(seq) {
					return
				}
				done.Add(1)
				t0 := time.Now()
				if err := op(seq); err != nil {
					errs.Add(1)
					continue
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	slices.Sort(all)
	ops := int(done.Load())
	r := Result{Ops: ops, Errors: int(errs.Load()), Elapsed: elapsed, PerSec: float64(ops) / elapsed.Seconds()}
	if len(all) > 0 {
		r.P50 = all[len(all)*50/100]
		r.P99 = all[min(len(all)-1, len(all)*99/100)]
	}
	return r
}

// Report attaches r to a benchmark as custom metrics; the usual ns/op is
// the wall time per operation across all clients.
func Report(b *testing.B, r Result, unit string) {
	b.ReportMetric(r.PerSec, unit+"/s")
	b.ReportMetric(float64(r.P50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
	if r.Errors > 0 {
		b.ReportMetric(float64(r.Errors), "errors")
	}
}

// Execer is a database handle (a pgx pool or connection).
type Execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// CommitLatency measures what one commit costs in db: one client, n
// transactions of one single-row UPDATE, on a probe table it creates and
// drops. Under the Aurora-like mode (commit_delay, localenv.Env.SetCommitDelay)
// it shows the latency that mode gives; the benchmarks and the on-sale
// simulator print it beside their figures.
func CommitLatency(ctx context.Context, db Execer, n int) (Result, error) {
	if _, err := db.Exec(ctx, `CREATE TABLE IF NOT EXISTS commit_probe (id INT PRIMARY KEY, n INT NOT NULL);
		INSERT INTO commit_probe VALUES (1, 0) ON CONFLICT DO NOTHING`); err != nil {
		return Result{}, fmt.Errorf("commit probe: %w", err)
	}
	defer db.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS commit_probe`)
	r := Run(1, n, func(int) error {
		_, err := db.Exec(ctx, `UPDATE commit_probe SET n = n + 1 WHERE id = 1`)
		return err
	})
	if r.Errors > 0 {
		return r, fmt.Errorf("commit probe: %d of %d commits failed", r.Errors, n)
	}
	return r, nil
}
