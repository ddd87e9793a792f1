-- STEP_UP: a step-up refused before the store was asked to decide (bot/store/passkeys.py
-- `audit_refused`): the request stays as it is; the refusal joins its hash-chained audit.
local req, A = KEYS[1], KEYS[2]
local now, actor, event = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local code, via, seen = ARGV[4], ARGV[5], ARGV[6]
local h = read(req)
if next(h) == nil then return 0 end
audit(A, h, {at = now, actor = actor, kind = 'refused', event = event, from = h.state,
             to = h.state, reason_code = code, version = tonumber(h.version),
             payload_hash = seen, via = (via ~= '' and via) or nil})
redis.call('HSET', req, 'audit_head', h.audit_head, 'audit_seq', h.audit_seq)
return 1
