package live_test

import (
	"context"
	"testing"
	"time"

	"github.com/catraca/catraca/shared/live"
	"github.com/catraca/catraca/tools/testenv"
)

// TestSlowWatcherIsDropped: a watcher that stops reading must not miss
// changes silently (nothing compares ids): its channel is closed so its
// stream ends and the browser resumes with Last-Event-ID. A reading
// watcher keeps every change.
func TestSlowWatcherIsDropped(t *testing.T) {
	t.Parallel()
	rdb := testenv.RedisClient(t)
	h := live.New(rdb, testenv.BaseConfig().RedisPrefix)
	ctx := context.Background()
	slow, stopSlow, err := h.Subscribe(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer stopSlow()
	reader, stopReader, err := h.Subscribe(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer stopReader()

	// The reader takes each batch before the next is sent; the slow
	// watcher's buffer (64) fills in the third batch.
	const batch, batches = 32, 4
	for n := range batches {
		for i := range batch {
			if err := h.Publish(ctx, 1, live.Delta{Seats: []int{n*batch + i}, State: "held"}); err != nil {
				t.Fatal(err)
			}
		}
		deadline := time.After(20 * time.Second)
		for got := range batch {
			select {
			case _, ok := <-reader:
				if !ok {
					t.Fatalf("the reading watcher was dropped in batch %d", n)
				}
			case <-deadline:
				t.Fatalf("the reading watcher got %d of batch %d", got, n)
			}
		}
	}
	// The relay has passed on every change, so the slow watcher's fate is
	// settled: what fitted its buffer, then a closed channel.
	for kept := 0; ; kept++ {
		select {
		case _, ok := <-slow:
			if !ok {
				return
			}
		default:
			t.Fatalf("the slow watcher was never dropped: it kept %d changes and silently missed %d", kept, batch*batches-kept)
		}
	}
}
