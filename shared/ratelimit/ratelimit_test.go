package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/catraca/catraca/tools/testenv"
)

// TestBurstThenRate: a bucket of 3 refilled at 0.5/s lets 3 calls through
// at once, then asks the 4th to wait for the next token (at most 2 s,
// less the time the first three took), and spends nothing while it waits.
func TestBurstThenRate(t *testing.T) {
	t.Parallel()
	rdb := testenv.RedisClient(t)
	l := New(rdb, fmt.Sprintf("t%d:", time.Now().UnixNano()))
	ctx := context.Background()
	start := time.Now()
	for i := range 3 {
		wait, err := l.Allow(ctx, "a", 3, 0.5)
		if err != nil || wait != 0 {
			t.Fatalf("call %d of the burst: wait %v, %v", i+1, wait, err)
		}
	}
	for range 2 {
		wait, err := l.Allow(ctx, "a", 3, 0.5)
		if err != nil || wait <= 0 || wait > 2*time.Second || wait < 2*time.Second-time.Since(start)-time.Millisecond {
			t.Fatalf("past the burst after %v: wait %v, %v", time.Since(start), wait, err)
		}
	}
	if wait, err := l.Allow(ctx, "b", 3, 0.5); err != nil || wait != 0 {
		t.Fatalf("another key has its own bucket: wait %v, %v", wait, err)
	}
}
