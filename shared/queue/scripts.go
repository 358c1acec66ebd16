package queue

import (
	"github.com/redis/go-redis/v9"

	"github.com/catraca/catraca/shared/ratelimit"
)

// Key order shared by every script: all keys of one event carry the same
// hash tag, so each script touches one cluster slot.
//
//	KEYS[1] cfg    hash: settings published from the catalog
//	KEYS[2] st     hash: phase, draw owner, served, ceiling, counters
//	KEYS[3] pre    set: pre-queue members (before the draw)
//	KEYS[4] q      zset: member → place number (dense ranks come from ZRANK)
//	KEYS[5] seen   zset: member → last heartbeat ms (abandonment)
//	KEYS[6] active zset: member → admitted-session expiry ms
//	KEYS[7] adm    zset: member → admission-token pickup expiry ms
//	KEYS[8] ticks  zset: admission samples for the measured rate
//	KEYS[9] health hash: hold outcomes since the last tick
//	KEYS[10] frozen set: the pre-queue being drawn
//	KEYS[11] placed hash: member → last place number given (0: seen only
//	         leaving). A member listed here had its place from this Redis, so
//	         a signed queue ticket never brings that place back.

// turnLua and restoreLua are shared by the join and status scripts.
//
// turn(m, now) is the end of m's shopping turn, or nil when m has none: the
// earlier of the session slot and the token pickup deadline, so a token
// minted from it never outlives the slot; and the place number m was
// admitted from, which identifies the turn (a place is used once):
// admission tokens carry it.
//
// restorable(m, place, st) says whether a signed queue ticket's place may be
// given back: only when this Redis knows nothing of m (it lost the queue in
// a failover) and the place is still ahead of the served count. A place
// served, left, abandoned or expired is never restored.
const turnLua = `
local function turn(m, now)
  local slot = redis.call('ZSCORE', KEYS[6], m)
  local pickup = redis.call('ZSCORE', KEYS[7], m)
  if not slot or not pickup then return nil end
  local e = math.min(tonumber(slot), tonumber(pickup))
  if e > now then return e, tonumber(redis.call('HGET', KEYS[11], m) or '0') end
  return nil
end
local function restorable(m, place, st)
  return place > 0 and st[1] == 'drawn' and place > tonumber(st[3] or '0')
    and redis.call('HEXISTS', KEYS[11], m) == 0
end
`

// joinScript: ARGV member, now, restore place (0 = none).
// Returns {state, place or time, turn when admitted}.
var joinScript = redis.NewScript(turnLua + `
local cfg = redis.call('HMGET', KEYS[1], 'enabled', 'opens', 'draw')
if cfg[1] ~= '1' then return {'closed', 0} end
local now = tonumber(ARGV[2])
if now < tonumber(cfg[2]) then return {'notyet', tonumber(cfg[2])} end
local m = ARGV[1]
local exp, slot = turn(m, now)
if exp then return {'admitted', exp, slot} end
local place = redis.call('ZSCORE', KEYS[4], m)
if place then
  redis.call('ZADD', KEYS[5], now, m)
  return {'waiting', tonumber(place)}
end
local st = redis.call('HMGET', KEYS[2], 'phase', 'soldout', 'served')
if st[2] == '1' then return {'soldout', 0} end
if st[1] ~= 'drawn' then
  redis.call('SADD', KEYS[3], m)
  redis.call('ZADD', KEYS[5], now, m)
  return {'prequeue', tonumber(cfg[3])}
end
place = tonumber(ARGV[3])
if not restorable(m, place, st) then
  place = redis.call('HINCRBY', KEYS[2], 'seq', 1)
end
redis.call('ZADD', KEYS[4], place, m)
redis.call('HSET', KEYS[11], m, place)
redis.call('ZADD', KEYS[5], now, m)
return {'waiting', place}
`)

// statusScript: ARGV member, now, restore place (0 = none).
// Returns {state, place, ahead, admission expiry, turn}. A status call is
// the fan's heartbeat.
var statusScript = redis.NewScript(turnLua + `
local now = tonumber(ARGV[2])
local m = ARGV[1]
local cfg = redis.call('HGET', KEYS[1], 'enabled')
if cfg ~= '1' then return {'closed', 0, 0, 0} end
local exp, slot = turn(m, now)
if exp then return {'admitted', 0, 0, exp, slot} end
local st = redis.call('HMGET', KEYS[2], 'phase', 'soldout', 'served')
local rank = redis.call('ZRANK', KEYS[4], m)
local place = tonumber(ARGV[3])
if not rank and restorable(m, place, st) then
  -- Redis lost this fan's place (failover): the signed ticket puts it back.
  redis.call('ZADD', KEYS[4], place, m)
  redis.call('HSET', KEYS[11], m, place)
  rank = redis.call('ZRANK', KEYS[4], m)
end
if rank then
  redis.call('ZADD', KEYS[5], now, m)
  if st[2] == '1' then return {'soldout', rank + 1, rank, 0} end
  return {'waiting', rank + 1, rank, 0}
end
if redis.call('SISMEMBER', KEYS[3], m) == 1 or redis.call('SISMEMBER', KEYS[10], m) == 1 then
  redis.call('ZADD', KEYS[5], now, m)
  return {'prequeue', 0, 0, 0}
end
if st[2] == '1' then return {'soldout', 0, 0, 0} end
local picked = redis.call('ZSCORE', KEYS[7], m)
if picked then return {'expired', 0, 0, tonumber(picked)} end
return {'none', 0, 0, 0}
`)

// freezeScript starts the draw once: ARGV owner, now, lease ms. The pre-queue
// is renamed, so joins from now on wait for the draw to finish.
// Returns 1 when the caller owns the draw.
var freezeScript = redis.NewScript(`
local now = tonumber(ARGV[2])
local draw = tonumber(redis.call('HGET', KEYS[1], 'draw') or '0')
if draw == 0 or now < draw then return 0 end
local st = redis.call('HMGET', KEYS[2], 'phase', 'lease')
if st[1] == 'drawn' then return 0 end
if st[1] == 'drawing' and tonumber(st[2]) > now then return 0 end
if st[1] ~= 'drawing' and redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('RENAME', KEYS[3], KEYS[10])
end
redis.call('HSET', KEYS[2], 'phase', 'drawing', 'owner', ARGV[1], 'lease', now + tonumber(ARGV[3]))
return 1
`)

// drawChunkScript writes ranks first.. for a chunk of shuffled members:
// ARGV owner, first rank, members...
var drawChunkScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[1] then return 0 end
local first = tonumber(ARGV[2])
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[4], first + i - 3, ARGV[i])
  redis.call('HSET', KEYS[11], ARGV[i], first + i - 3)
end
return 1
`)

// finishDrawScript ends the draw: ARGV owner, drawn count. Fans who joined
// while the draw ran go after the drawn ones.
var finishDrawScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], 'owner') ~= ARGV[1] then return 0 end
local n = tonumber(ARGV[2])
local late = redis.call('SMEMBERS', KEYS[3])
for _, m in ipairs(late) do
  if not redis.call('ZSCORE', KEYS[4], m) then
    n = n + 1
    redis.call('ZADD', KEYS[4], n, m)
    redis.call('HSET', KEYS[11], m, n)
  end
end
redis.call('DEL', KEYS[3], KEYS[10])
redis.call('HSET', KEYS[2], 'phase', 'drawn', 'drawn', n, 'seq', n)
redis.call('HDEL', KEYS[2], 'owner', 'lease')
return n
`)

// tickScript is one admission-controller step: ARGV now, abandon ms, active
// ttl ms, admission ttl ms, recovery cap per tick (0 = none), sold out flag,
// paused flag. Returns {admitted, active, waiting, ceiling}.
var tickScript = redis.NewScript(`
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now - 86400000)
local gone = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now - tonumber(ARGV[2]), 'LIMIT', 0, 5000)
for _, m in ipairs(gone) do
  redis.call('ZREM', KEYS[4], m)
  redis.call('SREM', KEYS[3], m)
  redis.call('ZREM', KEYS[5], m)
end
if #gone > 0 then redis.call('HINCRBY', KEYS[2], 'abandoned', #gone) end
redis.call('HSET', KEYS[2], 'soldout', ARGV[6])
-- The adaptive ceiling never exceeds the configured one: a lowered
-- setting applies at once.
local max = tonumber(redis.call('HGET', KEYS[1], 'ceiling') or '0')
local ceiling = math.min(max, tonumber(redis.call('HGET', KEYS[2], 'ceiling') or max))
local active = redis.call('ZCARD', KEYS[6])
local slack = ceiling - active
if ARGV[6] == '1' or ARGV[7] == '1' or redis.call('HGET', KEYS[2], 'phase') ~= 'drawn' then slack = 0 end
if now < tonumber(redis.call('HGET', KEYS[1], 'admit') or '0') then slack = 0 end
local cap = tonumber(ARGV[5])
if cap > 0 and slack > cap then slack = cap end
local n = 0
if slack > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[4], slack)
  local served = tonumber(redis.call('HGET', KEYS[2], 'served') or '0')
  for i = 1, #popped, 2 do
    local m = popped[i]
    redis.call('ZADD', KEYS[6], now + tonumber(ARGV[3]), m)
    redis.call('ZADD', KEYS[7], now + tonumber(ARGV[4]), m)
    redis.call('ZREM', KEYS[5], m)
    local place = tonumber(popped[i + 1])
    redis.call('HSET', KEYS[11], m, place)
    if place > served then served = place end
    n = n + 1
  end
  redis.call('HSET', KEYS[2], 'served', served)
  redis.call('HINCRBY', KEYS[2], 'admitted', n)
  active = active + n
end
redis.call('ZADD', KEYS[8], now, now .. ':' .. n)
redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', now - 60000)
return {n, active, redis.call('ZCARD', KEYS[4]), ceiling}
`)

// leaveScript takes a fan out of the room: its active slot (given to the
// next fan at the next tick), its unclaimed admission and its place in line.
// The member stays known in placed, so its queue ticket restores nothing.
// ARGV member.
var leaveScript = redis.NewScript(`
local m = ARGV[1]
if redis.call('HGET', KEYS[1], 'enabled') == '1' then redis.call('HSETNX', KEYS[11], m, 0) end
redis.call('ZREM', KEYS[6], m)
redis.call('ZREM', KEYS[7], m)
redis.call('ZREM', KEYS[4], m)
redis.call('SREM', KEYS[3], m)
redis.call('ZREM', KEYS[5], m)
return 1
`)

// holdScript vets one hold attempt: ARGV member, now, turn (0: the room is
// off), token expiry ms, bucket capacity, refill per second; KEYS[12] is the
// account's hold bucket. In a gated room the token's turn must be the
// member's open one: leaving or buying ends it, and a token of an earlier
// turn never counts for a later one. After a failover that lost the room
// (recovering), a turn this Redis never knew of is taken back until the
// token expires, so fans admitted before the loss keep buying and count
// against the ceiling again. Returns -1 when the turn is over, else the
// bucket's wait in ms (0: go ahead).
var holdScript = redis.NewScript(ratelimit.TakeLua + `
local m = ARGV[1]
local now = tonumber(ARGV[2])
local turn = tonumber(ARGV[3])
if turn ~= 0 then
  local slot = redis.call('ZSCORE', KEYS[6], m)
  local placed = redis.call('HGET', KEYS[11], m)
  if slot then
    if tonumber(slot) <= now or tonumber(placed or '0') ~= turn then return -1 end
  else
    local exp = tonumber(ARGV[4])
    local recovering = tonumber(redis.call('HGET', KEYS[2], 'recovering_until') or '0') > now
    if placed or not recovering or exp <= now then return -1 end
    redis.call('ZADD', KEYS[6], exp, m)
    redis.call('ZADD', KEYS[7], exp, m)
    redis.call('HSET', KEYS[11], m, turn)
  end
end
return take(KEYS[12], now, tonumber(ARGV[5]), tonumber(ARGV[6]))
`)
