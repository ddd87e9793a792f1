-- CLAIM: an executor takes an approved call, exactly once (bot/gate/claims.py).
local K = request_keys()
local now, actor = tonumber(ARGV[1]), ARGV[2]
local expect, lean = ARGV[3], ARGV[4]  -- see `begin` and `commit`
-- '' or why the executor refuses the decision: audited as a refused claim, reply FORGED
local forged = ARGV[5]
local token = ARGV[6]  -- the executor's claim token (bot/core/proof/fence.py); never ''

local t, done = begin(K, now, E.claim, actor, expect, true)
if not t then return done end
if forged == '' and same_claim(t, token) then return {R.repeat, flat(t.h)} end
local entry = (forged ~= '' and {text = forged}) or nil
if t.state ~= S.approved and t.state ~= S.auto_approved then
  return resolved_or_invalid(t, entry)
end
if entry then
  entry.payload_hash = t.h.payload_hash
  return refuse(t, FORGED, entry)
end
if t.h.expires_at ~= '' and now >= tonumber(t.h.expires_at) then
  return {R.expired, flat(t.h)}
end
-- The fence is audited with the claim: a claim lost in a failover and the one after it
-- are then told apart by whose report the audit refused.
return commit(t, claim(t, token), function(e, _, d) e.fence = d.upd.fence end, lean)
