package admission_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/queue"
	"github.com/catraca/catraca/shared/redisconn"
	"github.com/catraca/catraca/shared/venue"
	"github.com/catraca/catraca/tools/apptest"
)

// TestFailedFirstTickLeavesTheRoomUnpublished: when the first publication
// of a room fails, the controller must not count the room as published
// (Run marked it before the tick, which recorded it on a copy): its next
// tick then took the fresh room for one Redis lost and recovered it at a
// conservative rate, and the catalog was not told until the next re-read.
func TestFailedFirstTickLeavesTheRoomUnpublished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a := apptest.New(t, 1)
	l, err := a.Organizer.ImportLayout(ctx, 0, venue.Stadium("Blink Arena", "Recife", 20, 5))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	e, err := a.Organizer.CreateEvent(ctx, 0, organizer.EventSpec{VenueID: l.VenueID, LayoutVersion: l.Version, Name: "Blink",
		StartsAt: now.Add(48 * time.Hour), SaleStartsAt: now.Add(-time.Hour), SaleEndsAt: now.Add(47 * time.Hour),
		PriceLevels: []event.PriceLevel{{Code: "A", PriceCents: 1}, {Code: "B", PriceCents: 1}, {Code: "C", PriceCents: 1}, {Code: "GA", PriceCents: 1}},
		WaitingRoom: event.WaitingRoom{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Organizer.SetStatus(ctx, e.ID, "on_sale"); err != nil {
		t.Fatal(err)
	}

	rdb := redisconn.Open(a.Config.Redis)
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(&failFirstPublish{})
	var logs bytes.Buffer // read once Run has returned
	ctl := a.Admission()
	ctl.Room = queue.New(rdb, a.Config.RedisPrefix)
	ctl.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ctl.Interval = 20 * time.Millisecond

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { ctl.Run(runCtx, time.Time{}); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := a.Events.Get(ctx, e.ID)
		if err == nil && got.WaitingRoom.PublishedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			stop()
			<-done
			t.Fatalf("the room was never marked published; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if !strings.Contains(logs.String(), "tick failed") {
		t.Fatalf("the first tick should have failed; log:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "state lost") {
		t.Fatalf("a room never published was taken for a lost one; log:\n%s", logs.String())
	}
}

// failFirstPublish fails the first publication of a room: the first
// pipeline with an HSETNX (Room.Publish's "created" mark).
type failFirstPublish struct{ failed atomic.Bool }

func (h *failFirstPublish) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *failFirstPublish) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *failFirstPublish) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "hsetnx" }) && h.failed.CompareAndSwap(false, true) {
			return errors.New("redis blinked")
		}
		return next(ctx, cmds)
	}
}
