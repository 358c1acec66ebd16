package loadstat

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Querier is a database handle (a pgx pool or connection).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// CPU is the processor time a run spent on each side: this process (the
// load generator and the Go code under test) and the PostgreSQL backends
// serving the database, so a gap between two figures can be placed in Go
// or in SQL.
type CPU struct {
	Go, DB time.Duration
}

// CPUProbe measures CPU from Start until Stop.
type CPUProbe struct {
	db    Querier
	start CPU
	pids  map[int]time.Duration
}

// StartCPU begins measuring: this process's CPU time (getrusage) and that
// of every backend connected to db's database (from /proc; the backends of
// a pool opened before the run, as the benchmarks open theirs). A nil db
// measures this process only.
func StartCPU(ctx context.Context, db Querier) *CPUProbe {
	p := &CPUProbe{db: db, pids: backends(ctx, db)}
	p.start.Go = selfCPU()
	return p
}

// Stop returns the CPU spent since StartCPU. A backend that went away
// during the run is not counted; one that appeared counts from zero.
func (p *CPUProbe) Stop(ctx context.Context) CPU {
	c := CPU{Go: selfCPU() - p.start.Go}
	for pid, t := range backends(ctx, p.db) {
		c.DB += t - p.pids[pid]
	}
	return c
}

// ReportCPU attaches c, per operation, to a benchmark.
func ReportCPU(b *testing.B, c CPU, ops int) {
	b.ReportMetric(float64(c.Go.Microseconds())/float64(ops)/1000, "go-cpu-ms/op")
	b.ReportMetric(float64(c.DB.Microseconds())/float64(ops)/1000, "db-cpu-ms/op")
}

func selfCPU() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// backends maps the pids of db's database's backends to their CPU time.
func backends(ctx context.Context, db Querier) map[int]time.Duration {
	out := map[int]time.Duration{}
	if db == nil {
		return out
	}
	rows, err := db.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return out
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return out
	}
	for _, pid := range pids {
		out[int(pid)] = ProcCPU(int(pid))
	}
	return out
}

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on Linux for every architecture Go supports).
const clockTick = 10 * time.Millisecond

// ProcCPU is a process's time on a CPU, 0 when it cannot be read (the
// server on another machine or user). /proc/<pid>/schedstat counts it in
// nanoseconds; /proc/<pid>/stat, the fallback, only in clock ticks, which
// over a benchmark's thousand operations spread across 16 to 64 backends is
// an error of tens of microseconds per operation.
func ProcCPU(pid int) time.Duration {
	if raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat"); err == nil {
		if f := strings.Fields(string(raw)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				return time.Duration(ns)
			}
		}
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at state.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick
}
