package queue

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/dev/loadstat"
)

// BenchmarkRawRedis is the baseline for the waiting-room HTTP benchmarks:
// a ZADD NX and a ZRANK straight on the same Redis.
func BenchmarkRawRedis(b *testing.B) {
	f := newRoom(&testing.T{}, 900, Settings{Ceiling: 10})
	ctx := context.Background()
	key := f.room.keys(900).q
	for _, clients := range []int{16, 64} {
		b.Run(fmt.Sprintf("zadd/clients=%d", clients), func(b *testing.B) {
			for i := range b.N {
				r := loadstat.Run(clients, 20000, func(seq int) error {
					return f.rdb.ZAddNX(ctx, key, redisZ(float64(seq), strconv.Itoa(i*20000+seq))).Err()
				})
				loadstat.Report(b, r, "ops")
			}
		})
		b.Run(fmt.Sprintf("zrank/clients=%d", clients), func(b *testing.B) {
			for range b.N {
				r := loadstat.Run(clients, 20000, func(seq int) error {
					return f.rdb.ZRank(ctx, key, strconv.Itoa(seq)).Err()
				})
				loadstat.Report(b, r, "ops")
			}
		})
	}
}

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
func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
