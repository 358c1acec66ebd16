package ratelimit

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Strikes counts failures of a subject (an account, an address) in fixed
// windows, and past a policy's thresholds makes the subject wait: slowed
// (a short wait after each failure), then blocked (a long one). Times come
// from Now, not from Redis, so tests drive the clock; a key's TTL only
// cleans up.
type Strikes struct {
	rdb    redis.UniversalClient
	prefix string
	// Now is the clock (time.Now).
	Now func() time.Time
}

// NewStrikes returns strike counters on rdb with keys under prefix.
func NewStrikes(rdb redis.UniversalClient, prefix string) *Strikes {
	return &Strikes{rdb: rdb, prefix: prefix, Now: time.Now}
}

// Policy is when failures slow and then block a subject: the SlowAfter-th
// failure within one Window, and each after it, makes it wait SlowDelay;
// the BlockAfter-th blocks it for BlockFor. A zero threshold is off.
type Policy struct {
	Window     time.Duration
	SlowAfter  int
	SlowDelay  time.Duration
	BlockAfter int
	BlockFor   time.Duration
}

// Penalty is how long a subject must wait and why (Blocked, else slowed).
type Penalty struct {
	Wait    time.Duration
	Blocked bool
	Strikes int // failures counted in the window that set it
}

// strike counts one failure in the window's bucket (KEYS[1]) and, past a
// threshold, keeps the later of the penalty already set and the new one
// (KEYS[2]: until ms, blocked flag, strikes).
var strike = redis.NewScript(`
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local slowAfter, slowDelay = tonumber(ARGV[3]), tonumber(ARGV[4])
local blockAfter, blockFor = tonumber(ARGV[5]), tonumber(ARGV[6])
local n = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], window)
local untilMs, blocked
if blockAfter > 0 and n >= blockAfter then
  untilMs, blocked = now + blockFor, 1
elseif slowAfter > 0 and n >= slowAfter then
  untilMs, blocked = now + slowDelay, 0
else
  return n
end
local cur = tonumber(redis.call('HGET', KEYS[2], 'until') or '0')
if untilMs > cur then
  redis.call('HSET', KEYS[2], 'until', string.format('%d', untilMs), 'blocked', blocked, 'strikes', n)
  redis.call('PEXPIRE', KEYS[2], untilMs - now)
end
return n
`)

func (s *Strikes) keys(subject string, p Policy, now time.Time) []string {
	bucket := now.UnixMilli() / max(p.Window.Milliseconds(), 1)
	base := s.prefix + "strikes:{" + subject + "}:"
	return []string{base + strconv.FormatInt(bucket, 10), base + "penalty"}
}

// Add counts a failure of subject and returns the failures counted in the
// current window.
func (s *Strikes) Add(ctx context.Context, subject string, p Policy) (int, error) {
	now := s.Now()
	return strike.Run(ctx, s.rdb, s.keys(subject, p, now), now.UnixMilli(), p.Window.Milliseconds(),
		p.SlowAfter, p.SlowDelay.Milliseconds(), p.BlockAfter, p.BlockFor.Milliseconds()).Int()
}

// Penalty reads how long subject must still wait (zero: it may go on).
func (s *Strikes) Penalty(ctx context.Context, subject string) (Penalty, error) {
	v, err := s.rdb.HMGet(ctx, s.prefix+"strikes:{"+subject+"}:penalty", "until", "blocked", "strikes").Result()
	if err != nil {
		return Penalty{}, err
	}
	until, _ := strconv.ParseInt(str(v[0]), 10, 64)
	wait := time.UnixMilli(until).Sub(s.Now())
	if wait <= 0 {
		return Penalty{}, nil
	}
	n, _ := strconv.Atoi(str(v[2]))
	return Penalty{Wait: wait, Blocked: str(v[1]) == "1", Strikes: n}, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
