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
const TakeLua = `
local function take(key, now, cap, rate)
  local b = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(b[1] or cap)
  local at = tonumber(b[2] or now)
  tokens = math.min(cap, tokens + (now - at) * rate / 1000)
  local wait = 0
  if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) * 1000 / rate) end
  redis.call('HSET', key, 'tokens', tokens, 'at', now)
  redis.call('PEXPIRE', key, math.ceil(cap * 1000 / rate) + 1000)
  return wait
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
	wait, err := bucket.Run(ctx, l.rdb, []string{l.prefix + "rl:{" + key + "}"}, time.Now().UnixMilli(), capacity, perSecond).Int64()
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
