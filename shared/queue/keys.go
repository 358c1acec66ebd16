package queue

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/rediskey"
)

// roomKeys are the Redis keys of one event's waiting room
// (docs/waiting-room.md, Keys). Each ends with the name the Lua scripts
// give it.
type roomKeys struct {
	tag string // every key starts with it: see keys
	// cfg (hash): settings published from the catalog.
	cfg string
	// st (hash): phase, draw owner and lease, served, adaptive ceiling,
	// counters, admission rate, recovery deadline.
	st string
	// pre (set): pre-queue members, before the draw.
	pre string
	// q (zset): member → place number; a position is ZRANK + 1.
	q string
	// seen (zset): member → last heartbeat ms (abandonment).
	seen string
	// active (zset): member → shopping-slot expiry ms.
	active string
	// adm (zset): member → admission-token pickup deadline ms.
	adm string
	// ticks (zset): one "ms:admitted" sample per tick, for the rate.
	ticks string
	// health (hash): hold outcomes since the ceiling was last judged.
	health string
	// frozen (set): the pre-queue while it is drawn.
	frozen string
	// placed (hash): member → last place number given (0: seen only
	// leaving). A member listed here had its place from this Redis, so a
	// signed queue ticket never brings that place back.
	placed string
	// lease (string): the controller ticking the event.
	lease string
	// ts (hash): the control room's series, "<step>:<name>" → count or
	// sample (series.go).
	ts string
	// pass (set): during a presale, the accounts that redeemed a code
	// (presale.go).
	pass string
	// fan holds, per fan script, the room's keys it declares, boxed once
	// (fanArgs); set by Room.keys.
	fan [fanKinds][]any
}

// keys returns event's keys, built on its first call: every join and
// status call needs them, and building them is a dozen allocations.
func (r *Room) keys(eventID int64) roomKeys {
	if k, ok := r.keyset.Load(eventID); ok {
		return *k.(*roomKeys)
	}
	k := keysOf(r.prefix, eventID)
	for i, room := range fanRooms {
		for _, key := range room(k) {
			k.fan[i] = append(k.fan[i], key)
		}
	}
	r.keyset.Store(eventID, &k)
	return k
}

// keysOf returns event's keys. They all carry the hash tag {evt:ID}
// (rediskey.Event), so each script touches one Redis Cluster slot.
func keysOf(prefix string, eventID int64) roomKeys {
	tag := rediskey.Event(prefix, eventID)
	return roomKeys{tag: tag, cfg: tag + "cfg", st: tag + "st", pre: tag + "pre", q: tag + "q", seen: tag + "seen",
		active: tag + "active", adm: tag + "adm", ticks: tag + "ticks", health: tag + "health", frozen: tag + "frozen",
		placed: tag + "placed", lease: tag + "lease", ts: tag + "ts", pass: tag + "pass"}
}

// pace is account's token bucket for joins and status calls in this room
// (a string: see ratelimit.TakeLua).
func (k roomKeys) pace(account int64) string {
	return k.tag + "pace:" + strconv.FormatInt(account, 10)
}

// holds is account's token bucket for holds at this event (a string: see
// ratelimit.TakeLua).
func (k roomKeys) holds(account int64) string {
	return k.tag + "holds:" + strconv.FormatInt(account, 10)
}

// script is a Lua script over some keys of one room.
type script struct {
	src  string
	lua  *redis.Script
	keys func(k roomKeys, account int64) []string
}

// newScript returns the script body over the keys that keys lists. The
// body reads them by name: its source opens with `local <name> = KEYS[i]`
// for each, the name being how the key ends (cfg, q, pace…), so the
// names in Lua and the keys Go sends cannot disagree.
func newScript(keys func(k roomKeys, account int64) []string, body string) script {
	sample := keysOf("", 0)
	var src strings.Builder
	for i, key := range keys(sample, 0) {
		name, _, _ := strings.Cut(strings.TrimPrefix(key, sample.tag), ":")
		fmt.Fprintf(&src, "local %s = KEYS[%d]\n", name, i+1)
	}
	src.WriteString(body)
	return script{src: src.String(), lua: redis.NewScript(src.String()), keys: keys}
}

// fanScript is the join or status script, the calls every fan sends. Its
// keys are the room's (fanRooms), the same on every call for one event,
// then the account's bucket (pace), so that the start of each call's
// command can be built once per event (see fanArgs).
type fanScript struct {
	script
	kind fanKind
	hash any // the digest, boxed once
}

// fanKind names the fan scripts.
type fanKind int

const (
	joinKind fanKind = iota
	statusKind
	fanKinds
)

// fanRooms are the room's keys each fan script declares.
var fanRooms = [fanKinds]func(k roomKeys) []string{
	joinKind:   func(k roomKeys) []string { return append(roomFanKeys(k), k.ts, k.pass) },
	statusKind: func(k roomKeys) []string { return append(roomFanKeys(k), k.frozen) },
}

func newFanScript(kind fanKind, body string) fanScript {
	s := newScript(func(k roomKeys, account int64) []string {
		return append(fanRooms[kind](k), k.pace(account))
	}, body)
	return fanScript{script: s, kind: kind, hash: s.lua.Hash()}
}

// fanArgs returns the arguments of an EVALSHA of s for account, as go-redis
// sends them. The room's keys among them are boxed into interfaces once per
// event (roomKeys.fan): go-redis would box every key, an allocation each,
// on every call of every fan.
func (r *Room) fanArgs(s fanScript, eventID, account int64, args ...any) []any {
	k := r.keys(eventID)
	room := k.fan[s.kind]
	out := make([]any, 0, 4+len(room)+len(args))
	out = append(out, "evalsha", s.hash, len(room)+1)
	out = append(out, room...)
	out = append(out, k.pace(account))
	return append(out, args...)
}

// runFan runs s for account in one round trip (see fanArgs), loading the
// script when Redis does not have it cached.
func (r *Room) runFan(ctx context.Context, s fanScript, eventID, account int64, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, r.fanArgs(s, eventID, account, args...)...)
	cmd.SetFirstKeyPos(3)
	if err := r.rdb.Process(ctx, cmd); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		return s.lua.Eval(ctx, r.rdb, s.keys(r.keys(eventID), account), args...)
	}
	return cmd
}

// run runs s for one event (and account, for scripts that use its keys)
// in one round trip once Redis has the script cached.
func (s script) run(ctx context.Context, r *Room, eventID, account int64, args ...any) *redis.Cmd {
	return s.lua.Run(ctx, r.rdb, s.keys(r.keys(eventID), account), args...)
}
