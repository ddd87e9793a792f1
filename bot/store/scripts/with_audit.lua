-- WITH_AUDIT: a request's hash and its audit lines as one moment saw them (read only).
-- A script rather than MULTI: redis-py's oldest cluster pipelines cannot parse HGETALL
-- inside a transaction, and one script is one round trip on one slot either way.
local request, audit = KEYS[1], KEYS[2]
return {redis.call('HGETALL', request), redis.call('LRANGE', audit, 0, -1)}
