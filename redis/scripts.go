package redis

import goredis "github.com/redis/go-redis/v9"

// The limiter's state lives under one hash tag, so that every key of a
// limiter falls in one slot of a Redis Cluster; the scripts build the key
// names from KEYS[1], the tag.
//
//	{p}:leases  zset  lease id -> expiry (ms, Redis clock)
//	{p}:linfo   hash  lease id -> "bucket\nweight"
//	{p}:used    hash  "" -> global units held; "b:NAME" -> units of bucket NAME
//	{p}:queue   zset  waiter id -> order (priority, then arrival)
//	{p}:wexp    zset  waiter id -> expiry (ms): waiters of a dead server go
//	{p}:winfo   hash  waiter id -> "bucket\nweight"
//	{p}:seq     counter of arrivals
//	{p}:released channel: a slot was given back
const luaCommon = `
local p = KEYS[1]
local KL, KI, KU = p..':leases', p..':linfo', p..':used'
local KQ, KWE, KWI = p..':queue', p..':wexp', p..':winfo'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function split(info)
  local b, w = string.match(info, '^(.*)\n(%d+)$')
  return b, tonumber(w)
end

local function give(b, w)
  redis.call('HINCRBY', KU, '', -w)
  if b ~= '' then redis.call('HINCRBY', KU, 'b:'..b, -w) end
end

-- Leases not renewed in time belonged to a server that died (or stalled):
-- their units come back. Waiters that stopped asking are dropped.
local function purge()
  local freed = false
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KL, '-inf', now)) do
    local info = redis.call('HGET', KI, id)
    if info then
      local b, w = split(info)
      give(b, w)
      redis.call('HDEL', KI, id)
    end
    redis.call('ZREM', KL, id)
    freed = true
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KWE, '-inf', now)) do
    redis.call('ZREM', KQ, id)
    redis.call('ZREM', KWE, id)
    redis.call('HDEL', KWI, id)
    freed = true
  end
  if freed then redis.call('PUBLISH', p..':released', '1') end
end
`

// acquireScript grants, queues or rejects one request.
//
// ARGV: limits JSON {"max":N,"buckets":{"name":limit}}, waiter id, bucket,
// weight, lease id, lease TTL ms, strategy, priority, queue size, waiter
// TTL ms. Returns 1 granted, 0 waiting (queued now or still), -1 rejected.
//
// A request may take capacity only when every waiter ahead of it in the
// queue is held back by its own bucket: a waiter ahead that fits will be
// served first, and one that needs more global capacity than is free ends
// the walk, so a heavy call is not starved by lighter ones behind it.
var acquireScript = goredis.NewScript(luaCommon + `
purge()
local cfg = cjson.decode(ARGV[1])
local me, b, w = ARGV[2], ARGV[3], tonumber(ARGV[4])
local lease, ttl = ARGV[5], tonumber(ARGV[6])
local strategy, prio, qsize, wttl = ARGV[7], tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])

local usedG = tonumber(redis.call('HGET', KU, '') or '0')
local function usedB(bb) return tonumber(redis.call('HGET', KU, 'b:'..bb) or '0') end
local function limitOf(bb)
  local l = cfg.buckets[bb]
  if l == nil then return 0 end
  return l
end
local function bucketFull(bb, ww)
  local l = limitOf(bb)
  return l > 0 and usedB(bb) + ww > l
end

local mine = redis.call('ZSCORE', KQ, me)
local score
if mine then
  score = tonumber(mine)
else
  local seq = redis.call('INCR', p..':seq')
  score = seq
  if strategy == 'priority' then score = -prio * 1e12 + seq end
end

local blocked = false
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KQ, '-inf', '('..string.format('%.0f', score))) do
  local info = redis.call('HGET', KWI, id)
  if info then
    local bb, ww = split(info)
    if not bucketFull(bb, ww) then
      blocked = true
      break
    end
  end
end

if not blocked and usedG + w <= cfg.max and not bucketFull(b, w) then
  redis.call('ZADD', KL, now + ttl, lease)
  redis.call('HSET', KI, lease, b..'\n'..w)
  redis.call('HINCRBY', KU, '', w)
  if b ~= '' then redis.call('HINCRBY', KU, 'b:'..b, w) end
  if mine then
    redis.call('ZREM', KQ, me)
    redis.call('ZREM', KWE, me)
    redis.call('HDEL', KWI, me)
  end
  return 1
end
if mine then
  redis.call('ZADD', KWE, now + wttl, me)
  return 0
end
if strategy == 'reject' or redis.call('ZCARD', KQ) >= qsize then
  return -1
end
redis.call('ZADD', KQ, score, me)
redis.call('ZADD', KWE, now + wttl, me)
redis.call('HSET', KWI, me, b..'\n'..w)
return 0
`)

// releaseScript gives a lease's units back. ARGV: lease id. Returns 1 when
// the lease was held, 0 when it had already expired.
var releaseScript = goredis.NewScript(luaCommon + `
local info = redis.call('HGET', KI, ARGV[1])
redis.call('HDEL', KI, ARGV[1])
if redis.call('ZREM', KL, ARGV[1]) == 0 or not info then
  return 0
end
local b, w = split(info)
give(b, w)
redis.call('PUBLISH', p..':released', '1')
return 1
`)

// renewScript extends the leases still held. ARGV: lease TTL ms, then the
// lease ids. Returns the ids that are gone: expired, or released while the
// renewal was on its way (the caller tells the two apart).
var renewScript = goredis.NewScript(luaCommon + `
local ttl = tonumber(ARGV[1])
local gone = {}
for i = 2, #ARGV do
  if redis.call('ZADD', KL, 'XX', 'CH', now + ttl, ARGV[i]) == 0 and not redis.call('ZSCORE', KL, ARGV[i]) then
    gone[#gone + 1] = ARGV[i]
  end
end
return gone
`)

// leaveScript takes a waiter out of the queue (timeout, canceled context).
// ARGV: waiter id. Others may now go: they are told.
var leaveScript = goredis.NewScript(luaCommon + `
if redis.call('ZREM', KQ, ARGV[1]) == 1 then
  redis.call('ZREM', KWE, ARGV[1])
  redis.call('HDEL', KWI, ARGV[1])
  redis.call('PUBLISH', p..':released', '1')
end
return 1
`)

// stateScript reads the shared counters for Metrics: global units, queue
// length, then the units of each bucket named in ARGV.
var stateScript = goredis.NewScript(luaCommon + `
purge()
local out = {tonumber(redis.call('HGET', KU, '') or '0'), redis.call('ZCARD', KQ)}
for i = 1, #ARGV do
  out[#out + 1] = tonumber(redis.call('HGET', KU, 'b:'..ARGV[i]) or '0')
end
return out
`)
