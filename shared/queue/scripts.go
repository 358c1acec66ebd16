package queue

import (
	"fmt"

	"github.com/catraca/catraca/shared/ratelimit"
)

// Every script below reads its keys by the names newScript gives them (cfg,
// st, q…: see roomKeys); all keys of one event carry the same hash tag, so
// each script touches one cluster slot.

// turnLua is shared by the join and status scripts, which define its
// functions only where they need them; they read the active, adm and
// placed keys.
//
// turn(m, now) is the end of m's shopping turn, or nil when m has none: the
// earlier of the session slot and the token pickup deadline, so a token
// minted from it never outlives the slot; and the place number m was
// admitted from, which identifies the turn (a place is used once):
// admission tokens carry it.
//
// restorable(m, place, s) says whether a signed queue ticket's place may be
// given back (s: the st hash's phase, soldout, served): only when this
// Redis knows nothing of m (it lost the queue in a failover) and the place
// is still ahead of the served count. A place served, left, abandoned or
// expired is never restored.
const turnLua = `
local function turn(m, now)
  local slot = redis.call('ZSCORE', active, m)
  local pickup = redis.call('ZSCORE', adm, m)
  if not slot or not pickup then return nil end
  local e = math.min(tonumber(slot), tonumber(pickup))
  if e > now then return e, tonumber(redis.call('HGET', placed, m) or '0') end
  return nil
end
local function restorable(m, place, s)
  return place > 0 and s[1] == 'drawn' and place > tonumber(s[3] or '0')
    and redis.call('HEXISTS', placed, m) == 0
end
`

// slowLua spends one token of the account's bucket for joins and status
// calls (fanBurst, then fanRefill a second): an empty bucket ends the
// script with {'slow', wait ms}, before it reads or changes anything. It
// sets now (ARGV[2], ms) for the rest of the script.
var slowLua = ratelimit.TakeLua + fmt.Sprintf(`
local now = tonumber(ARGV[2])
local wait = take(pace, now, %d, %g)
if wait > 0 then return {'slow', wait} end
`, fanBurst, float64(fanRefill))

// The join and status scripts are what every fan sends, so they spend as
// little of Redis as they can (docs/waiting-room.md, What a fan costs):
// numbers read from Redis go back to Go as the strings they are (Go parses
// them), scores and places are written from ARGV or with %d (Redis 7.0
// formats a Lua number argument with printf("%.17g")), and each declares
// only the keys it may touch, which Redis copies into KEYS on every call.

// roomFanKeys are the room's keys the join and status scripts share.
func roomFanKeys(k roomKeys) []string {
	return []string{k.cfg, k.st, k.pre, k.q, k.seen, k.active, k.adm, k.placed}
}

// joinScript: ARGV member, now, restore place (absent = none).
// Returns {state, place or time, turn when admitted or fans ahead when
// waiting (ZRANK: the status's count, in the same round trip)}; places and times
// read from Redis come back as strings. The functions it needs only off
// its most frequent path are defined after it.
var joinScript = newFanScript(joinKind, slowLua+`
local conf = redis.call('HMGET', cfg, 'enabled', 'opens', 'draw', 'presale')
if conf[1] ~= '1' then return {'closed', 0} end
if now < tonumber(conf[2]) then return {'notyet', conf[2]} end
local m = ARGV[1]
-- A fan in line has no open turn (a tick takes it out of q to admit it),
-- so the most frequent case skips turn.
local place = redis.call('ZSCORE', q, m)
if place then
  redis.call('ZADD', seen, ARGV[2], m)
  return {'waiting', place, redis.call('ZRANK', q, m)}
end
-- A presale until conf[4]: only accounts with a redeemed code get a place.
if conf[4] and now < tonumber(conf[4]) and redis.call('SISMEMBER', pass, m) == 0 then
  return {'presale', conf[4]}
end
`+turnLua+tallyLua+`
local exp, slot = turn(m, now)
if exp then return {'admitted', exp, slot} end
local s = redis.call('HMGET', st, 'phase', 'soldout', 'served')
if s[2] == '1' then return {'soldout', 0} end
if s[1] ~= 'drawn' then
  if redis.call('SADD', pre, m) == 1 then tally(now, 'joins', 1) end
  redis.call('ZADD', seen, ARGV[2], m)
  return {'prequeue', conf[3]}
end
place = ARGV[3]
if not (place and restorable(m, tonumber(place), s)) then
  place = string.format('%d', redis.call('HINCRBY', st, 'seq', '1'))
end
redis.call('ZADD', q, place, m)
redis.call('HSET', placed, m, place)
redis.call('ZADD', seen, ARGV[2], m)
tally(now, 'joins', 1)
return {'waiting', place, redis.call('ZRANK', q, m)}
`)

// statusScript: ARGV member, now, restore place (absent = none).
// Returns {state, position, ahead, admission expiry, turn}, and for a fan
// waiting in line also what its ETA needs, as read (strings): {…,
// admitted in the minute up to the last tick, that tick's time,
// configured ceiling, adaptive ceiling, active-session ttl ms}. A status
// call is the fan's heartbeat. It reads the settings it needs from st,
// where Publish copies them, so a fan in line costs one hash read. A fan
// in line has no open turn (see the join script): only a fan not in q
// needs turn's functions.
var statusScript = newFanScript(statusKind, slowLua+`
local m = ARGV[1]
local s = redis.call('HMGET', st, 'enabled', 'soldout', 'rate', 'rate_at', 'set_ceiling', 'ceiling', 'active_ttl')
if not s[1] then
  -- Published by a controller that did not copy them yet (a deployment).
  local c = redis.call('HMGET', cfg, 'enabled', 'ceiling', 'active_ttl')
  s[1], s[5], s[7] = c[1], c[2], c[3]
end
if s[1] ~= '1' then return {'closed', 0, 0, 0} end
local rank = redis.call('ZRANK', q, m)
if not rank then
`+turnLua+`
  local exp, slot = turn(m, now)
  if exp then return {'admitted', 0, 0, exp, slot} end
  local place = ARGV[3]
  if not (place and restorable(m, tonumber(place), redis.call('HMGET', st, 'phase', 'soldout', 'served'))) then
    if redis.call('SISMEMBER', pre, m) == 1 or redis.call('SISMEMBER', frozen, m) == 1 then
      redis.call('ZADD', seen, ARGV[2], m)
      return {'prequeue', 0, 0, 0}
    end
    if s[2] == '1' then return {'soldout', 0, 0, 0} end
    local picked = redis.call('ZSCORE', adm, m)
    if picked then return {'expired', 0, 0, picked} end
    return {'none', 0, 0, 0}
  end
  -- Redis lost this fan's place (failover): the signed ticket puts it back.
  redis.call('ZADD', q, place, m)
  redis.call('HSET', placed, m, place)
  rank = redis.call('ZRANK', q, m)
end
redis.call('ZADD', seen, ARGV[2], m)
if s[2] == '1' then return {'soldout', rank + 1, rank, 0} end
return {'waiting', rank + 1, rank, 0, 0, s[3] or '0', s[4] or '0', s[5] or '0', s[6] or '0', s[7] or '0'}
`)

// freezeScript starts the draw once: ARGV owner, now, lease ms. The pre-queue
// is renamed, so joins from now on wait for the draw to finish.
// Returns 1 when the caller owns the draw.
var freezeScript = newScript(func(k roomKeys, _ int64) []string {
	return []string{k.cfg, k.st, k.pre, k.frozen}
}, `
local now = tonumber(ARGV[2])
local draw = tonumber(redis.call('HGET', cfg, 'draw') or '0')
if draw == 0 or now < draw then return 0 end
local s = redis.call('HMGET', st, 'phase', 'lease')
if s[1] == 'drawn' then return 0 end
if s[1] == 'drawing' and tonumber(s[2]) > now then return 0 end
if s[1] ~= 'drawing' and redis.call('EXISTS', pre) == 1 then
  redis.call('RENAME', pre, frozen)
end
redis.call('HSET', st, 'phase', 'drawing', 'owner', ARGV[1], 'lease', now + tonumber(ARGV[3]))
return 1
`)

// drawChunkScript writes ranks first.. for a chunk of shuffled members:
// ARGV owner, first rank, members...
var drawChunkScript = newScript(func(k roomKeys, _ int64) []string {
	return []string{k.st, k.q, k.placed}
}, `
if redis.call('HGET', st, 'owner') ~= ARGV[1] then return 0 end
local first = tonumber(ARGV[2])
for i = 3, #ARGV do
  redis.call('ZADD', q, first + i - 3, ARGV[i])
  redis.call('HSET', placed, ARGV[i], first + i - 3)
end
return 1
`)

// finishDrawScript ends the draw: ARGV owner, drawn count. Fans who joined
// while the draw ran go after the drawn ones.
var finishDrawScript = newScript(func(k roomKeys, _ int64) []string {
	return []string{k.st, k.pre, k.q, k.frozen, k.placed}
}, `
if redis.call('HGET', st, 'owner') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[2])
local late = redis.call('SMEMBERS', pre)
for _, m in ipairs(late) do
  if not redis.call('ZSCORE', q, m) then
    n = n + 1
    redis.call('ZADD', q, n, m)
    redis.call('HSET', placed, m, n)
  end
end
redis.call('DEL', pre, frozen)
redis.call('HSET', st, 'phase', 'drawn', 'drawn', n, 'seq', n)
redis.call('HDEL', st, 'owner', 'lease')
return n
`)

// tickScript is one admission-controller step: ARGV now, abandon ms, active
// ttl ms, admission ttl ms, recovery cap per tick (0 = none), sold out flag,
// paused flag. It also keeps the admissions of the last minute in st
// (rate, rate_at), so a status call reads the rate without the samples,
// and the control room's series (ts): admissions, the line, shoppers and
// ceiling as this tick saw them, and the steps that left the window.
// Returns {admitted, active, waiting, ceiling}.
var tickScript = newScript(func(k roomKeys, _ int64) []string {
	return []string{k.cfg, k.st, k.pre, k.q, k.seen, k.active, k.adm, k.ticks, k.placed, k.ts}
}, tallyLua+seriesLua+`
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', active, '-inf', now)
redis.call('ZREMRANGEBYSCORE', adm, '-inf', now - 86400000)
local gone = redis.call('ZRANGEBYSCORE', seen, '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0, 5000)
for _, m in ipairs(gone) do
  redis.call('ZREM', q, m)
  redis.call('SREM', pre, m)
  redis.call('ZREM', seen, m)
end
if #gone > 0 then redis.call('HINCRBY', st, 'abandoned', #gone) end
redis.call('HSET', st, 'soldout', ARGV[6])
-- The adaptive ceiling never exceeds the configured one: a lowered
-- setting applies at once.
local max = tonumber(redis.call('HGET', cfg, 'ceiling') or '0')
local ceiling = math.min(max, tonumber(redis.call('HGET', st, 'ceiling') or max))
local shopping = redis.call('ZCARD', active)
local slack = ceiling - shopping
if ARGV[6] == '1' or ARGV[7] == '1' or redis.call('HGET', st, 'phase') ~= 'drawn' then slack = 0 end
if now < tonumber(redis.call('HGET', cfg, 'admit') or '0') then slack = 0 end
local cap = tonumber(ARGV[5])
if cap > 0 and slack > cap then slack = cap end
local n = 0
if slack > 0 then
  local popped = redis.call('ZPOPMIN', q, slack)
  local served = tonumber(redis.call('HGET', st, 'served') or '0')
  for i = 1, #popped, 2 do
    local m = popped[i]
    redis.call('ZADD', active, now + tonumber(ARGV[3]), m)
    redis.call('ZADD', adm, now + tonumber(ARGV[4]), m)
    redis.call('ZREM', seen, m)
    local place = tonumber(popped[i + 1])
    redis.call('HSET', placed, m, place)
    if place > served then served = place end
    n = n + 1
  end
  redis.call('HSET', st, 'served', served)
  redis.call('HINCRBY', st, 'admitted', n)
  shopping = shopping + n
end
redis.call('ZADD', ticks, now, now .. ':' .. n)
redis.call('ZREMRANGEBYSCORE', ticks, '-inf', now - 60000)
local rate = 0
for _, t in ipairs(redis.call('ZRANGE', ticks, 0, -1)) do
  rate = rate + tonumber(string.match(t, ':(%d+)$'))
end
redis.call('HSET', st, 'rate', rate, 'rate_at', now)
local waiting = redis.call('ZCARD', q)
if n > 0 then tally(now, 'admitted', n) end
sample(now, {'waiting', waiting, 'prequeue', redis.call('SCARD', pre), 'active', shopping, 'ceiling', ceiling})
forget(now)
return {n, shopping, waiting, ceiling}
`)

// leaveScript takes a fan out of the room: its active slot (given to the
// next fan at the next tick), its unclaimed admission and its place in line.
// The member stays known in placed, so its queue ticket restores nothing.
// ARGV member.
var leaveScript = newScript(func(k roomKeys, _ int64) []string {
	return []string{k.cfg, k.pre, k.q, k.seen, k.active, k.adm, k.placed}
}, `
local m = ARGV[1]
if redis.call('HGET', cfg, 'enabled') == '1' then redis.call('HSETNX', placed, m, 0) end
redis.call('ZREM', active, m)
redis.call('ZREM', adm, m)
redis.call('ZREM', q, m)
redis.call('SREM', pre, m)
redis.call('ZREM', seen, m)
return 1
`)

// holdScript vets one hold attempt: ARGV member, now, turn (0: the room is
// off), token expiry ms, bucket capacity, refill per second. In a gated
// room the token's turn must be the member's open one: leaving or buying
// ends it, and a token of an earlier turn never counts for a later one.
// After a failover that lost the room (recovering), a turn this Redis never
// knew of is taken back until the token expires, so fans admitted before
// the loss keep buying and count against the ceiling again. Without a
// turn (no room gates the event's holds), a presale still admits only
// the accounts of its pass set (SetPresale): the room's gate turned off
// during the presale must not open the sale to everyone. Returns -1 when
// the turn is over, minus the presale's end (ms) for an account without a
// code during the presale, else the hold bucket's wait in ms (0: go ahead).
var holdScript = newScript(func(k roomKeys, account int64) []string {
	return []string{k.cfg, k.st, k.active, k.adm, k.placed, k.pass, k.holds(account)}
}, ratelimit.TakeLua+`
local m = ARGV[1]
local now = tonumber(ARGV[2])
local turn = tonumber(ARGV[3])
if turn == 0 then
  local presale = redis.call('HGET', cfg, 'presale')
  if presale and now < tonumber(presale) and redis.call('SISMEMBER', pass, m) == 0 then return -tonumber(presale) end
end
if turn ~= 0 then
  local slot = redis.call('ZSCORE', active, m)
  local given = redis.call('HGET', placed, m)
  if slot then
    if tonumber(slot) <= now or tonumber(given or '0') ~= turn then return -1 end
  else
    local exp = tonumber(ARGV[4])
    local recovering = tonumber(redis.call('HGET', st, 'recovering_until') or '0') > now
    if given or not recovering or exp <= now then return -1 end
    redis.call('ZADD', active, exp, m)
    redis.call('ZADD', adm, exp, m)
    redis.call('HSET', placed, m, turn)
  end
end
return take(holds, now, tonumber(ARGV[5]), tonumber(ARGV[6]))
`)

// leaseScript: ARGV owner, ttl ms. Returns 1 when owner holds the lease.
var leaseScript = newScript(func(k roomKeys, _ int64) []string {
	return []string{k.lease}
}, `
local cur = redis.call('GET', lease)
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', lease, ARGV[1], 'PX', ARGV[2])
return 1
`)
