"""The Lua scripts of the Redis task store (``tasks.redis_store``): each state
change of a task is one script, so it is atomic. Key layout: see that module.
"""

from __future__ import annotations

__all__ = ["CANCEL", "CREATE", "FINISH", "PAGE", "RATE", "READ", "SWEEP"]

# Every script's ARGV starts with: prefix, now, the dead-worker error json and
# message, channel; ``read`` fails a working task whose worker's lease has lapsed.
_READ_FUNCTION = """
local function read(key, id)
  local t = redis.call('HGETALL', key)
  if #t == 0 then return t end
  if redis.call('HGET', key, 'status') == 'working' then
    local worker = redis.call('HGET', key, 'worker')
    if worker and redis.call('EXISTS', ARGV[1] .. 'lease:' .. worker) == 0 then
      redis.call('HSET', key, 'status', 'failed', 'error', ARGV[3], 'updatedAt', ARGV[2],
                 'statusMessage', ARGV[4])
      redis.call('SREM', ARGV[1] .. 'running:' .. worker, id)
      redis.call('PUBLISH', ARGV[5], 'done:' .. id)
      t = redis.call('HGETALL', key)
    end
  end
  return t
end
"""

# Drops up to 200 expired entries of ``live`` and their ids in ``listed:``.
_FORGET_FUNCTION = """
local function forget(live)
  local gone = redis.call('ZRANGEBYSCORE', live, '-inf', '(' .. ARGV[2], 'LIMIT', 0, 200)
  for _, member in ipairs(gone) do
    local era, digest, id = string.match(member, '^([^:]*):([^:]*):(.*)$')
    if id then redis.call('ZREM', ARGV[1] .. 'listed:' .. era .. ':' .. digest, id) end
    redis.call('ZREM', live, member)
  end
end
"""

# KEYS: task. ARGV: (common), id. Returns the hash.
READ = _READ_FUNCTION + "return read(KEYS[1], ARGV[6])"

# KEYS: task, listed, live, running. ARGV: (common), id, live member, expires at,
# ttl ms, max tasks, max ttl ms, then the hash's fields and values.
# 1: created; 0: the store holds max tasks already.
CREATE = (
    _FORGET_FUNCTION
    + """
forget(KEYS[3])
if redis.call('ZCOUNT', KEYS[3], '(' .. ARGV[2], '+inf') >= tonumber(ARGV[10]) then return 0 end
local keep = tonumber(ARGV[11])
redis.call('HSET', KEYS[1], unpack(ARGV, 12))
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[9]), 1))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[8], ARGV[7])
redis.call('SADD', KEYS[4], ARGV[6])
for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], keep) end
return 1
"""
)

# KEYS: listed. ARGV: (common), after score ('': from the start), after id, limit.
# Returns {more (0/1), {id, hash}, ...}: the live tasks after the position, oldest
# first; ids whose record has expired are dropped from the set on the way.
PAGE = (
    _READ_FUNCTION
    + """
local limit = tonumber(ARGV[8])
local score, after = ARGV[6], ARGV[7]
local page = {}
while true do
  local batch = {}
  if score ~= '' then
    for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], score, score)) do
      if id > after then table.insert(batch, {id, score}) end
    end
  end
  local low = score == '' and '-inf' or '(' .. score
  local rest = redis.call('ZRANGEBYSCORE', KEYS[1], low, '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
  for i = 1, #rest, 2 do table.insert(batch, {rest[i], rest[i + 1]}) end
  if #batch == 0 then return {0, unpack(page)} end
  for _, entry in ipairs(batch) do
    local t = read(ARGV[1] .. 'task:' .. entry[1], entry[1])
    if #t == 0 then
      redis.call('ZREM', KEYS[1], entry[1])
    else
      if #page == limit then return {1, unpack(page)} end
      table.insert(page, {entry[1], t})
    end
    score, after = entry[2], entry[1]
  end
end
"""
)

# KEYS: task, running set. ARGV: (common), id, status, result, error.
# 1: finished; 0: already terminal or gone. The id leaves the running set either way.
FINISH = """
redis.call('SREM', KEYS[2], ARGV[6])
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[7], 'result', ARGV[8], 'error', ARGV[9],
           'updatedAt', ARGV[2], 'statusMessage', '')
redis.call('PUBLISH', ARGV[5], 'done:' .. ARGV[6])
return 1
"""

# KEYS: task. ARGV: (common), id, message. Returns the hash before the change
# and whether this call cancelled the task ({} when gone).
CANCEL = """
local t = redis.call('HGETALL', KEYS[1])
if #t == 0 then return {t, 0} end
if redis.call('HGET', KEYS[1], 'status') ~= 'working' then return {t, 0} end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'updatedAt', ARGV[2], 'statusMessage', ARGV[7])
local worker = redis.call('HGET', KEYS[1], 'worker')
if worker then redis.call('SREM', ARGV[1] .. 'running:' .. worker, ARGV[6]) end
redis.call('PUBLISH', ARGV[5], 'cancel:' .. ARGV[6])
redis.call('PUBLISH', ARGV[5], 'done:' .. ARGV[6])
return {t, 1}
"""

# KEYS: workers set, live. ARGV: (common), max ttl ms.
# Fails the running tasks of every registered worker whose lease has lapsed; drops
# from every running set the ids that no longer run (record expired or terminal),
# and expired ids from ``live`` and ``listed:``.
SWEEP = (
    _FORGET_FUNCTION
    + """
local failed = 0
for _, worker in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local running = ARGV[1] .. 'running:' .. worker
  local dead = redis.call('EXISTS', ARGV[1] .. 'lease:' .. worker) == 0
  for _, id in ipairs(redis.call('SMEMBERS', running)) do
    local key = ARGV[1] .. 'task:' .. id
    local status = redis.call('HGET', key, 'status')
    if status == 'working' and dead then
      redis.call('HSET', key, 'status', 'failed', 'error', ARGV[3], 'updatedAt', ARGV[2],
                 'statusMessage', ARGV[4])
      redis.call('PUBLISH', ARGV[5], 'done:' .. id)
      failed = failed + 1
    end
    if status ~= 'working' or dead then redis.call('SREM', running, id) end
  end
  if dead then
    redis.call('DEL', running)
    redis.call('SREM', KEYS[1], worker)
  end
end
forget(KEYS[2])
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[6]) end
return failed
"""
)

# One request against a caller's token bucket (ratelimit.bucket.take, the same
# formula): KEYS[1] the bucket (its theoretical arrival time), ARGV now, the seconds
# between two tokens, the burst. Returns the seconds to wait as a string ("0":
# admitted). The key expires when the bucket is full again: no key, a full bucket.
# Numbers go in and out as %.17g, which a double survives exactly, so the script
# decides every boundary as the Python does (a rounded wait could read as 0).
RATE = """
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local after = math.max(tat, now) + interval
local wait = after - now - burst * interval
if wait > 0 then return string.format('%.17g', wait) end
redis.call('SET', KEYS[1], string.format('%.17g', after), 'PX', math.ceil((after - now) * 1000))
return '0'
"""
