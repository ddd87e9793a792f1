-- GRANT: make, use, give back or revoke a standing approval (bot/store/grants.py).
-- One script for the four, so the check of a grant and the count of its uses are one
-- atomic step: two calls at once can never use a grant more often than it allows.
local grant, used, audit, live, sources = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local op, now, gid = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local actor, arg = ARGV[4], ARGV[5]  -- who, and the op's own value (see each op)
local keep_ms = tonumber(ARGV[6])  -- how long the set of passed requests outlives expiry
local x7, x8, x9 = ARGV[7], ARGV[8], ARGV[9]  -- make: uses, expires_at, source; give_back: why

local function note(kind, extra)
  local e = {kind = kind, at = now, actor = actor, grant = gid}
  for k, v in pairs(extra or {}) do e[k] = v end
  redis.call('RPUSH', audit, cjson.encode(e))
end

local function keep(expires_at)
  -- Only the set of passed requests ends: the signed record and its audit stay as long
  -- as the requests' histories that name the grant, so `audit verify` can check them.
  redis.call('PEXPIRE', used, math.max(expires_at - now, 0) + keep_ms)
end

if op == 'make' then  -- arg: the grant's JSON
  if redis.call('EXISTS', grant) == 1 then return {R.exists} end
  local uses, expires_at, source = tonumber(x7), tonumber(x8), x9
  redis.call('HSET', grant, 'json', arg, 'left', uses, 'expires_at', expires_at,
             'revoked_by', '', 'revoked_at', '')
  redis.call('ZADD', live, expires_at, gid)
  redis.call('HSET', sources, source, gid)
  note('granted', {source = source, uses = uses, expires_at = expires_at})
  keep(expires_at)
  return {R.ok}
end

if redis.call('EXISTS', grant) == 0 then return {R.gone} end
local h = redis.call('HMGET', grant, 'left', 'expires_at', 'revoked_by')
local left, expires_at, revoked_by = tonumber(h[1]), tonumber(h[2]), h[3]

if op == 'use' then  -- arg: the request id the grant would pass
  if redis.call('SISMEMBER', used, arg) == 1 then return {R.again, left} end
  if revoked_by ~= '' then return {R.revoked, left} end
  if now >= expires_at then return {R.expired, left} end
  if left <= 0 then return {R.used_up, left} end
  left = redis.call('HINCRBY', grant, 'left', -1)
  redis.call('SADD', used, arg)
  note('used', {request = arg, left = left})
  keep(expires_at)
  return {R.ok, left}
end

if op == 'give_back' then  -- arg: the request the grant could not approve after all
  if redis.call('SREM', used, arg) == 0 then return {R.noop, left} end
  left = redis.call('HINCRBY', grant, 'left', 1)
  note('given_back', {request = arg, left = left, why = x7})
  return {R.ok, left}
end

if op == 'revoke' then
  if revoked_by ~= '' then return {R.already, revoked_by} end
  redis.call('HSET', grant, 'revoked_by', actor, 'revoked_at', now)
  redis.call('ZREM', live, gid)
  note('revoked', {left = left})
  return {R.ok, actor}
end
return redis.error_reply('GRANT: unknown op ' .. op)
