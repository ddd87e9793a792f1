-- CLAIM: an executor takes an approved call, exactly once (bot/store/claims.py).
local K = request_keys()
local now, actor = tonumber(ARGV[1]), ARGV[2]
local expect, lean = ARGV[3], ARGV[4]  -- see `begin` and `commit`
-- '' or why the executor refuses the decision: audited as a refused claim, reply FORGED
local forged = ARGV[5]

local t, done = begin(K, now, E.claim, actor, expect, true)
if not t then return done end
local entry = (forged ~= '' and {text = forged}) or nil
if t.state ~= S.approved and t.state ~= S.auto_approved then
  return resolved_or_invalid(t, entry)
end
if entry then
  entry.payload_hash = t.h.payload_hash
  return refuse(t, FORGED, entry)
end
if t.h.expires_at ~= '' and now >= tonumber(t.h.expires_at) then
  return {'expired', flat(t.h)}
end
return commit(t, claim(t), nil, lean)
