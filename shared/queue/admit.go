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
	won, err := freezeScript.run(ctx, r, eventID, 0, owner, ms(r.now()), 60000).Int()
	if err != nil || won == 0 {
		return 0, false, unavailable(err)
	}
	var members []string
	iter := r.rdb.SScan(ctx, k.frozen, 0, "", 10000).Iterator()
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
		ok, err := drawChunkScript.run(ctx, r, eventID, 0, args...).Int()
		if err != nil {
			return 0, false, unavailable(err)
		}
		if ok == 0 {
			return 0, false, nil // another ticker took the draw over
		}
	}
	n, err := finishDrawScript.run(ctx, r, eventID, 0, owner, len(members)).Int()
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
	var cfg, st *redis.MapStringStringCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cfg, st = p.HGetAll(ctx, k.cfg), p.HGetAll(ctx, k.st)
		return nil
	})
	if err != nil {
		return res, unavailable(err)
	}
	c, s := fields(cfg.Val()), fields(st.Val())
	if c.str("enabled") != "1" {
		return res, nil
	}
	if ms(now) >= c.num("draw") && s.str("phase") != "drawn" {
		if res.Drawn, _, err = r.Draw(ctx, eventID); err != nil {
			return res, err
		}
	}
	ceiling, healthy, err := r.adjustCeiling(ctx, k, now, c.num("ceiling"), s)
	if err != nil {
		return res, err
	}
	// When the active count itself was lost, admit only at the steady
	// turnover rate until every pre-loss session would have expired.
	var capPerTick int64
	if until := s.num("recovering_until"); until > ms(now) {
		res.Recovering = true
		capPerTick = max(1, ceiling*max(in.Interval.Milliseconds(), 1)/max(c.num("active_ttl"), 1))
		if !healthy {
			in.Paused = true
		}
	}
	v, err := tickScript.run(ctx, r, eventID, 0, ms(now), c.num("abandon"), c.num("active_ttl"),
		c.num("admission_ttl"), capPerTick, flag(in.SoldOut), flag(in.Paused)).Int64Slice()
	if err != nil {
		return res, unavailable(err)
	}
	res.Admitted, res.Active, res.Waiting, res.Ceiling = v[0], v[1], v[2], v[3]
	return res, nil
}

// fields are a Redis hash as read.
type fields map[string]string

func (f fields) str(name string) string { return f[name] }

func (f fields) num(name string) int64 {
	n, _ := strconv.ParseInt(f[name], 10, 64)
	return n
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// adjustCeiling returns the ceiling for this tick and whether the backend
// looked healthy. The ceiling follows the health the hold endpoint
// reports, judged once per adjustPeriod however often the controller
// ticks, and never exceeds the configured one (a lowered setting applies
// now, not after a backoff).
func (r *Room) adjustCeiling(ctx context.Context, k roomKeys, now time.Time, configured int64, st fields) (int64, bool, error) {
	ceiling := st.num("ceiling")
	if ceiling == 0 || ceiling > configured {
		ceiling = configured
	}
	if ms(now)-st.num("adjusted") < adjustPeriod.Milliseconds() {
		return ceiling, true, nil
	}
	var health *redis.MapStringStringCmd
	var active *redis.IntCmd
	_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		health = p.HGetAll(ctx, k.health)
		p.Del(ctx, k.health)
		active = p.ZCount(ctx, k.active, strconv.FormatInt(ms(now), 10), "+inf")
		return nil
	})
	if err != nil {
		return 0, false, unavailable(err)
	}
	h := fields(health.Val())
	healthy := true
	if n := h.num("n"); n > 0 {
		avg := time.Duration(h.num("lat_us")/n) * time.Microsecond
		healthy = avg <= healthyLatency && float64(h.num("err"))/float64(n) <= healthyErrorRate
	}
	switch {
	case !healthy:
		ceiling = max(configured/10, 1, int64(float64(ceiling)*decrease))
	case active.Val() >= ceiling*9/10:
		ceiling = min(configured, ceiling+max(1, configured/20))
	}
	if err := r.rdb.HSet(ctx, k.st, "ceiling", ceiling, "adjusted", ms(now)).Err(); err != nil {
		return 0, false, unavailable(err)
	}
	return ceiling, healthy, nil
}

// Recover marks an event whose Redis state was lost: place numbers restart
// above any number issued before (fans with signed tickets get theirs
// back), and admission runs at the steady rate for one session lifetime.
func (r *Room) Recover(ctx context.Context, eventID int64, activeTTL time.Duration) error {
	k := r.keys(eventID)
	now := r.now()
	err := r.rdb.HSet(ctx, k.st, "phase", "drawn", "recovering_until", now.Add(activeTTL).UnixMilli(),
		"seq", now.UnixMilli()).Err()
	return unavailable(err)
}

// Lease lets one controller tick an event: the holder renews it each tick,
// others skip while it lasts. Correctness does not depend on it (every
// tick is atomic); it only avoids doing the work twice.
func (r *Room) Lease(ctx context.Context, eventID int64, owner string, ttl time.Duration) (bool, error) {
	n, err := leaseScript.run(ctx, r, eventID, 0, owner, ttl.Milliseconds()).Int()
	return n == 1, unavailable(err)
}
