-- WAIT: make an item's wake stream before its waiter reads the item (bot/store/waiting.py),
-- so a transition after that read finds the stream and writes its version there (the
-- scripts write only to a stream that exists: common.lua `wake`); one before the read,
-- the read sees. KEYS: the item's hash and its wake stream (one slot: keys.py); ARGV:
-- how long the stream lives, in seconds, and '' or the item's field that tells its
-- scripts someone waits (a request's `watched`, bot/store/codec.py WATCHED: they skip
-- the wake without it). Returns 0, nothing made, if there is no item.
local item, W, ttl, flag = KEYS[1], KEYS[2], ARGV[1], ARGV[2]

if redis.call('EXISTS', item) == 0 then return 0 end
-- Made with the id 0-1, below every version's (`v-0`, versions start at 1): it wakes
-- nobody, and is never added to a stream that exists, which would refuse an id below
-- its newest. So a second waiter, or the same one again, only moves the expiry.
if redis.call('EXISTS', W) == 0 then redis.call('XADD', W, '0-1', 'state', '') end
redis.call('EXPIRE', W, ttl)
if flag ~= '' then redis.call('HSET', item, flag, '1') end
return 1
