package queue

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The control room's time series: one small Redis hash per event (the
// room's ts key), "<step>:<name>" → a count or a sample, written by
// commands that already run (the join script, the admission tick, the hold
// report), never by a round trip of its own on a fan's path; and one
// global hash for what has no event (API 5xx, PSP errors). Steps that
// leave the window are deleted by the writers, and a hash nobody writes
// for seriesKeep expires whole. Reading the last minutes is one pipeline of
// two commands whatever the number of fans.

// SeriesStep is the width of one step.
const SeriesStep = 10 * time.Second

// seriesKeep is how long a step is kept.
const seriesKeep = time.Hour

// LatencyBounds are the upper bounds of the hold-latency histogram's
// buckets; a last bucket counts everything slower.
var LatencyBounds = []time.Duration{10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond,
	5 * time.Second}

// Incidents counted in the global series.
const (
	IncidentHTTP5xx = "http_5xx"
	IncidentPSP     = "psp_errors"
)

// HoldOutcome is what became of one hold attempt.
type HoldOutcome int

// Hold outcomes: held; refused because the seats were just taken (a seat
// collision); refused for the fan's own reason (limit, sold out, bad
// request); or failed on our side.
const (
	HoldOK HoldOutcome = iota
	HoldTaken
	HoldRefused
	HoldFailed
)

// seriesNames are the names an event's step may hold: counters, the
// latency histogram, the tick's samples and SetGauges' (g:).
var seriesNames = func() []string {
	names := []string{"joins", "admitted", "holds", "taken", "failed", "waiting", "prequeue", "active", "ceiling",
		"g:revenue", "g:sold", "g:psp_queued"}
	for i := range len(LatencyBounds) + 1 {
		names = append(names, "lat"+strconv.Itoa(i))
	}
	return names
}()

var incidentNames = []string{IncidentHTTP5xx, IncidentPSP}

// tallyLua and seriesLua write a room's series (the ts key) from a script:
// tally(now, name, n) adds to a counter of now's step (tallyLua, all the
// join script needs), sample(now, {name, value, …}) records values,
// forget(now) deletes every step that left the window (seriesLua, which
// needs tallyLua before it). A hash nobody writes for seriesKeep expires:
// its life is renewed by each step's first tally and by every sample. The
// hash's "trimmed" field is the last step deleted: after a few steps (the
// usual tick) forget deletes those steps' fields by name; after a longer
// silence (sporadic writes) or on a hash without the mark it reads the
// field names once and deletes every older step, so no step outlives the
// window however irregular the writes.
var tallyLua = fmt.Sprintf(`
local function field(now, name) return string.format('%%d:', math.floor(now / %[1]d)) .. name end
local function tally(now, name, n)
  if redis.call('HINCRBY', ts, field(now, name), n) == n then redis.call('PEXPIRE', ts, '%[2]d') end
end
`, SeriesStep.Milliseconds(), seriesKeep.Milliseconds())

var seriesLua = fmt.Sprintf(`
local function sample(now, values)
  local args = {}
  for i = 1, #values, 2 do
    args[#args + 1] = field(now, values[i])
    args[#args + 1] = values[i + 1]
  end
  redis.call('HSET', ts, unpack(args))
  redis.call('PEXPIRE', ts, %[2]d)
end
local function forget(now)
  local first = math.floor((now - %[2]d) / %[1]d)
  local done = tonumber(redis.call('HGET', ts, 'trimmed') or '')
  if done and done >= first - 1 then return end
  local old = {}
  if done and done >= first - %[4]d then
    local names = {'%[3]s'}
    for s = done + 1, first - 1 do
      for _, n in ipairs(names) do old[#old + 1] = s .. ':' .. n end
    end
  else
    for _, f in ipairs(redis.call('HKEYS', ts)) do
      local s = tonumber(string.match(f, '^(-?%%d+):'))
      if s and s < first then old[#old + 1] = f end
    end
  end
  for i = 1, #old, 500 do redis.call('HDEL', ts, unpack(old, i, math.min(i + 499, #old))) end
  redis.call('HSET', ts, 'trimmed', first - 1)
end
`, SeriesStep.Milliseconds(), seriesKeep.Milliseconds(), strings.Join(slices.Concat(seriesNames, incidentNames), "', '"), forgetByName)

// forgetByName is how many steps forget deletes by name; a longer gap
// costs one HKEYS instead.
const forgetByName = 6

// trimScript is forget alone, for the series written from Go (the global
// one has no room keys).
var trimScript = redis.NewScript("local ts = KEYS[1]\n" + tallyLua + seriesLua + "forget(tonumber(ARGV[1]))\nreturn 0\n")

func stepOf(t time.Time) int64 { return t.UnixMilli() / SeriesStep.Milliseconds() }

func seriesField(step int64, name string) string { return strconv.FormatInt(step, 10) + ":" + name }

func (r *Room) globalSeries() string { return r.prefix + "ts" }

// write runs one pipeline on a series hash: fn's writes, the steps that
// left the window deleted (trimScript), the hash's life renewed. When Redis
// has not cached trimScript yet, it is loaded for the next write, which
// trims what this one left.
func (r *Room) write(ctx context.Context, key string, fn func(p redis.Pipeliner, step int64)) error {
	now := r.now()
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		fn(p, stepOf(now))
		trimScript.EvalSha(ctx, p, []string{key}, now.UnixMilli())
		p.PExpire(ctx, key, seriesKeep)
		return nil
	})
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		err = trimScript.Load(ctx, r.rdb).Err()
	}
	return unavailable(err)
}

// CountIncident adds one to a global counter of the current step; callers
// use it only on failure paths.
func (r *Room) CountIncident(ctx context.Context, name string) error {
	return r.write(ctx, r.globalSeries(), func(p redis.Pipeliner, step int64) {
		p.HIncrBy(ctx, r.globalSeries(), seriesField(step, name), 1)
	})
}

// SetGauges records values sampled now (the control room's sales totals)
// in the current step of an event's series.
func (r *Room) SetGauges(ctx context.Context, eventID int64, values map[string]int64) error {
	key := r.keys(eventID).ts
	return r.write(ctx, key, func(p redis.Pipeliner, step int64) {
		fields := make([]any, 0, 2*len(values))
		for f, v := range values {
			fields = append(fields, seriesField(step, "g:"+f), v)
		}
		p.HSet(ctx, key, fields...)
	})
}

// RecordHold reports one hold attempt's latency and outcome: for the
// adaptive ceiling (fans' own mistakes are not failures) and, in the same
// pipeline, for the control room's series.
func (r *Room) RecordHold(ctx context.Context, eventID int64, latency time.Duration, outcome HoldOutcome) error {
	k := r.keys(eventID)
	return r.write(ctx, k.ts, func(p redis.Pipeliner, step int64) {
		p.HIncrBy(ctx, k.health, "n", 1)
		p.HIncrBy(ctx, k.health, "lat_us", latency.Microseconds())
		switch outcome {
		case HoldOK:
			p.HIncrBy(ctx, k.ts, seriesField(step, "holds"), 1)
		case HoldTaken:
			p.HIncrBy(ctx, k.ts, seriesField(step, "taken"), 1)
		case HoldFailed:
			p.HIncrBy(ctx, k.health, "err", 1)
			p.HIncrBy(ctx, k.ts, seriesField(step, "failed"), 1)
		}
		p.HIncrBy(ctx, k.ts, seriesField(step, latencyField(latency)), 1)
		p.PExpire(ctx, k.health, time.Minute)
	})
}

// Bucket is one step of an event's series. Counters count events within
// the step; samples (Waiting, Active, ...) are the last value sampled in
// it, and Sampled says whether the admission tick sampled it.
type Bucket struct {
	At                                 time.Time
	Joins, Admitted, Holds, Taken      int64
	Failed, HTTP5xx, PSPErrors         int64
	Latency                            []int64 // counts per LatencyBounds bucket, then slower
	Sampled                            bool
	Waiting, Prequeue, Active, Ceiling int64
	Gauges                             map[string]int64 // set with SetGauges
}

// Series reads the last n steps of an event's series, oldest first, the
// current (partial) step last: two HMGETs in one pipeline.
func (r *Room) Series(ctx context.Context, eventID int64, n int) ([]Bucket, error) {
	last := stepOf(r.now())
	var own, global []string
	for i := range n {
		step := last - int64(n-1-i)
		for _, name := range seriesNames {
			own = append(own, seriesField(step, name))
		}
		for _, name := range incidentNames {
			global = append(global, seriesField(step, name))
		}
	}
	var ownCmd, globalCmd *redis.SliceCmd
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		ownCmd = p.HMGet(ctx, r.keys(eventID).ts, own...)
		globalCmd = p.HMGet(ctx, r.globalSeries(), global...)
		return nil
	})
	if err != nil {
		return nil, unavailable(err)
	}
	ov, gv := ownCmd.Val(), globalCmd.Val()
	out := make([]Bucket, n)
	for i := range n {
		m := map[string]any{}
		for j, name := range seriesNames {
			m[name] = ov[i*len(seriesNames)+j]
		}
		for j, name := range incidentNames {
			m[name] = gv[i*len(incidentNames)+j]
		}
		num := func(f string) int64 { s, _ := m[f].(string); v, _ := strconv.ParseInt(s, 10, 64); return v }
		b := Bucket{At: time.UnixMilli((last - int64(n-1-i)) * SeriesStep.Milliseconds()).UTC(),
			Joins: num("joins"), Admitted: num("admitted"), Holds: num("holds"), Taken: num("taken"),
			Failed: num("failed"), HTTP5xx: num(IncidentHTTP5xx), PSPErrors: num(IncidentPSP),
			Latency: make([]int64, len(LatencyBounds)+1), Gauges: map[string]int64{}}
		for j := range b.Latency {
			b.Latency[j] = num("lat" + strconv.Itoa(j))
		}
		if m["active"] != nil {
			b.Sampled = true
			b.Waiting, b.Prequeue, b.Active, b.Ceiling = num("waiting"), num("prequeue"), num("active"), num("ceiling")
		}
		for _, name := range seriesNames {
			if g, ok := strings.CutPrefix(name, "g:"); ok && m[name] != nil {
				b.Gauges[g] = num(name)
			}
		}
		out[i] = b
	}
	return out, nil
}

// Percentile returns the upper bound of the latency bucket holding the
// q-th quantile of the counts (0 when there are none; the last bound
// doubled for the open bucket).
func Percentile(counts []int64, q float64) time.Duration {
	var total int64
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.999999)
	var seen int64
	for i, c := range counts {
		seen += c
		if seen >= rank {
			if i < len(LatencyBounds) {
				return LatencyBounds[i]
			}
			break
		}
	}
	return 2 * LatencyBounds[len(LatencyBounds)-1]
}

func latencyField(d time.Duration) string {
	for i, b := range LatencyBounds {
		if d <= b {
			return "lat" + strconv.Itoa(i)
		}
	}
	return "lat" + strconv.Itoa(len(LatencyBounds))
}
