// Package ratelimit is a token bucket in Redis, shared by every process: one
// atomic script per call, so many API instances and queue consumers together
// never exceed a rate.
package ratelimit

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// TakeLua defines the Lua function take(key, now_ms, capacity, per_second):
// it spends one token of the bucket at key and returns 0, or how many
// milliseconds to wait when the bucket is empty (nothing spent). Scripts of
// other packages embed it to rate-limit in the round trip they already make;
// the bucket key must then share their cluster slot.
//
// The bucket is kept as one integer (GCRA): the time, in ms, at which it
// will be full again. A bucket holds capacity - (full - now) / interval
// tokens, so a call may spend one while full - now <= (capacity - 1) *
// interval, and spending moves full one interval later (rounded up to the
// ms, so the rate is never exceeded). The key expires when the bucket is
// full, and a missing key is a full bucket (capacity is at least 1), so
// the first command is a SET NX … GET that spends from a full bucket in
// one command, and only a bucket spent from within the last interval costs
// a second SET: a waiting room's heartbeats, minutes apart, always find the
// bucket full. Integers are written with %d: this is the hot path of every
// waiting-room call, and Redis 7.0 formats a Lua number argument with
// printf("%.17g") and parses decimals with strtod, which cost more than the
// commands. (SET with NX and GET together needs Redis 7.0.)
const TakeLua = `
local function take(key, now, cap, rate)
  local interval = 1000 / rate
  local full = math.ceil(now + interval)
  local was = redis.call('SET', key, string.format('%d', full), 'NX', 'PX', string.format('%d', full - now), 'GET')
  if not was then return 0 end
  full = math.max(tonumber(was), now)
  local wait = math.ceil(full - now - (cap - 1) * interval)
  if wait > 0 then return wait end
  full = math.ceil(full + interval)
  redis.call('SET', key, string.format('%d', full), 'PX', string.format('%d', full - now))
  return 0
end
`

var bucket = redis.NewScript(TakeLua + `return take(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))`)

// Limiter spends tokens from named buckets.
type Limiter struct {
	rdb    redis.UniversalClient
	prefix string
}

// New returns a limiter on rdb with keys under prefix.
func New(rdb redis.UniversalClient, prefix string) *Limiter {
	return &Limiter{rdb: rdb, prefix: prefix}
}

// Allow spends one token of bucket key (capacity, refill per second) and
// returns 0, or how long to wait when the bucket is empty (nothing spent).
func (l *Limiter) Allow(ctx context.Context, key string, capacity int, perSecond float64) (time.Duration, error) {
	wait, err := bucket.Run(ctx, l.rdb, []string{l.prefix + "pace:{" + key + "}"}, time.Now().UnixMilli(), capacity, perSecond).Int64()
	return time.Duration(wait) * time.Millisecond, err
}

// Wait blocks until a token is spent or ctx ends.
func (l *Limiter) Wait(ctx context.Context, key string, capacity int, perSecond float64) error {
	for {
		wait, err := l.Allow(ctx, key, capacity, perSecond)
		if err != nil || wait == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
