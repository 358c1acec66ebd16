package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// drawChunk is how many members one draw script writes.
const drawChunk = 5000

func newOwner() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Draw freezes the pre-queue at sale start, shuffles it once and gives it
// dense places 1..N. Racing callers are safe: only the one that froze the
// pre-queue (or takes over an abandoned draw after its lease) writes.
func (r *Room) Draw(ctx context.Context, eventID int64) (int, bool, error) {
	owner := newOwner()
	k := r.keys(eventID)
	won, err := freezeScript.Run(ctx, r.rdb, k, owner, ms(r.now()), 60000).Int()
	if err != nil || won == 0 {
		return 0, false, unavailable(err)
	}
	var members []string
	iter := r.rdb.SScan(ctx, k[9], 0, "", 10000).Iterator()
	for iter.Next(ctx) {
		members = append(members, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return 0, false, unavailable(err)
	}
	Shuffle(members)
	for i := 0; i < len(members); i += drawChunk {
		chunk := members[i:min(i+drawChunk, len(members))]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, owner, i+1)
		for _, m := range chunk {
			args = append(args, m)
		}
		ok, err := drawChunkScript.Run(ctx, r.rdb, k, args...).Int()
		if err != nil {
			return 0, false, unavailable(err)
		}
		if ok == 0 {
			return 0, false, nil // another ticker took the draw over
		}
	}
	n, err := finishDrawScript.Run(ctx, r.rdb, k, owner, len(members)).Int()
	if err != nil {
		return 0, false, unavailable(err)
	}
	return n, n > 0 || len(members) == 0, nil
}

// TickInput is what the admission controller knows from outside Redis.
type TickInput struct {
	SoldOut bool // nothing left and nothing held: tell the queue
	Paused  bool // nothing available now, but holds may still come back
	// Interval is the time between ticks, for the recovery rate.
	Interval time.Duration
}

// TickResult reports one tick.
type TickResult struct {
	Admitted, Active, Waiting, Ceiling int64
	Drawn                              int
	Recovering                         bool
}

// Health thresholds of the adaptive ceiling (additive increase,
// multiplicative decrease within [ceiling/10, ceiling]).
const (
	healthyLatency   = 250 * time.Millisecond
	healthyErrorRate = 0.02
	decrease         = 0.7
	adjustPeriod     = time.Second
)

// Tick runs one admission step for an event: the draw when it is due, the
// adaptive ceiling, then one atomic script that drops expired sessions and
// abandoned fans and admits up to the ceiling. Overlapping ticks never
// exceed the ceiling: the count and the pop happen in one script.
func (r *Room) Tick(ctx context.Context, eventID int64, in TickInput) (TickResult, error) {
	k := r.keys(eventID)
	now := r.now()
	var res TickResult
	cfg, err := r.rdb.HGetAll(ctx, k[0]).Result()
	if err != nil {
		return res, unavailable(err)
	}
	if cfg["enabled"] != "1" {
		return res, nil
	}
	num := func(m map[string]string, f string) int64 { n, _ := strconv.ParseInt(m[f], 10, 64); return n }
	if now.UnixMilli() >= num(cfg, "draw") {
		if res.Drawn, _, err = r.Draw(ctx, eventID); err != nil {
			return res, err
		}
	}
	st, err := r.rdb.HGetAll(ctx, k[1]).Result()
	if err != nil {
		return res, unavailable(err)
	}
	maxCeiling := num(cfg, "ceiling")
	ceiling := num(st, "ceiling")
	if ceiling == 0 || ceiling > maxCeiling {
		ceiling = maxCeiling // a lowered setting applies now, not after a backoff
	}
	// The ceiling follows backend health reported by the hold endpoint,
	// judged once per adjustPeriod however often the controller ticks.
	healthy := true
	if now.UnixMilli()-num(st, "adjusted") >= adjustPeriod.Milliseconds() {
		health, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HGetAll(ctx, k[8])
			p.Del(ctx, k[8])
			return nil
		})
		if err != nil {
			return res, unavailable(err)
		}
		h := health[0].(*redis.MapStringStringCmd).Val()
		if n := num(h, "n"); n > 0 {
			avg := time.Duration(num(h, "lat_us")/n) * time.Microsecond
			healthy = avg <= healthyLatency && float64(num(h, "err"))/float64(n) <= healthyErrorRate
		}
		active, err := r.rdb.ZCount(ctx, k[5], strconv.FormatInt(now.UnixMilli(), 10), "+inf").Result()
		if err != nil {
			return res, unavailable(err)
		}
		switch {
		case !healthy:
			ceiling = max(maxCeiling/10, 1, int64(float64(ceiling)*decrease))
		case active >= ceiling*9/10:
			ceiling = min(maxCeiling, ceiling+max(1, maxCeiling/20))
		}
		if err := r.rdb.HSet(ctx, k[1], "ceiling", ceiling, "adjusted", now.UnixMilli()).Err(); err != nil {
			return res, unavailable(err)
		}
	}
	// When the active count itself was lost, admit only at the steady
	// turnover rate until every pre-loss session would have expired.
	var capPerTick int64
	if until := num(st, "recovering_until"); until > now.UnixMilli() {
		res.Recovering = true
		ttl := max(num(cfg, "active_ttl"), 1)
		capPerTick = max(1, ceiling*max(in.Interval.Milliseconds(), 1)/ttl)
		if !healthy {
			capPerTick = -1
		}
	}
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	paused := in.Paused || capPerTick < 0
	v, err := tickScript.Run(ctx, r.rdb, k, now.UnixMilli(), num(cfg, "abandon"), num(cfg, "active_ttl"),
		num(cfg, "admission_ttl"), max(capPerTick, 0), flag(in.SoldOut), flag(paused)).Int64Slice()
	if err != nil {
		return res, unavailable(err)
	}
	res.Admitted, res.Active, res.Waiting, res.Ceiling = v[0], v[1], v[2], v[3]
	return res, nil
}

// Recover marks an event whose Redis state was lost: place numbers restart
// above any number issued before (fans with signed tickets get theirs
// back), and admission runs at the steady rate for one session lifetime.
func (r *Room) Recover(ctx context.Context, eventID int64, activeTTL time.Duration) error {
	k := r.keys(eventID)
	now := r.now()
	err := r.rdb.HSet(ctx, k[1], "phase", "drawn", "recovering_until", now.Add(activeTTL).UnixMilli(),
		"seq", now.UnixMilli()).Err()
	return unavailable(err)
}

// RecordHold reports one hold attempt's latency and whether the backend
// failed, for the adaptive ceiling. Fans' own mistakes are not failures.
func (r *Room) RecordHold(ctx context.Context, eventID int64, latency time.Duration, failed bool) error {
	k := r.keys(eventID)[8]
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.HIncrBy(ctx, k, "n", 1)
		p.HIncrBy(ctx, k, "lat_us", latency.Microseconds())
		if failed {
			p.HIncrBy(ctx, k, "err", 1)
		}
		p.PExpire(ctx, k, time.Minute)
		return nil
	})
	return unavailable(err)
}

var leaseScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`)

// Lease lets one controller tick an event: the holder renews it each tick,
// others skip while it lasts. Correctness does not depend on it (every
// tick is atomic); it only avoids doing the work twice.
func (r *Room) Lease(ctx context.Context, eventID int64, owner string, ttl time.Duration) (bool, error) {
	key := r.prefix + "{evt:" + strconv.FormatInt(eventID, 10) + "}:lease"
	n, err := leaseScript.Run(ctx, r.rdb, []string{key}, owner, ttl.Milliseconds()).Int()
	return n == 1, unavailable(err)
}
