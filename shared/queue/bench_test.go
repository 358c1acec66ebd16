package queue

import (
	"context"
	"testing"
	"time"
)

// BenchmarkAdmitTick times one admission tick that admits 1,000 fans.
func BenchmarkAdmitTick(b *testing.B) {
	ctx := context.Background()
	for i := range b.N {
		id := int64(1000 + i)
		f := newRoom(&testing.T{}, id, Settings{Ceiling: 1000})
		f.clock.add(time.Minute)
		if _, _, err := f.room.Draw(ctx, id); err != nil {
			b.Fatal(err)
		}
		for a := int64(1); a <= 1000; a++ {
			if _, err := f.room.Join(ctx, id, a, 0); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		res, err := f.room.Tick(ctx, id, TickInput{Interval: time.Second})
		elapsed := time.Since(start)
		if err != nil || res.Admitted != 1000 {
			b.Fatalf("tick admitted %d: %v", res.Admitted, err)
		}
		b.ReportMetric(float64(elapsed.Microseconds())/1000, "tick-ms")
	}
}
