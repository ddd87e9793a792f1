-- TIMEOUT: the deadline of the request's current state passed (the sweeper's timer).
local K = request_keys()
local now, actor = tonumber(ARGV[1]), ARGV[2]
local expect, lean = ARGV[3], ARGV[4]  -- see `begin` and `commit`
local fence = ARGV[5]  -- '' or the version the timer was set at: moved since, a no-op
local seal = ARGV[6]  -- serve's signature of the default it applies (bot/core/proof/seal.py)
-- '1': a timeout that would auto-approve is left undone (reply 'unsigned'): a store
-- without the key leaves approving defaults to serve's sweeper, since no executor
-- would claim an unsigned one.
local leave = ARGV[7]

local t, done = begin(K, now, E.timeout, actor, expect, false)
if not t then return done end
local h, state = t.h, t.state
if (fence ~= '' and tonumber(fence) ~= t.version) or is(FINAL, state) or h.expires_at == ''
   or now < tonumber(h.expires_at) then
  return {R.noop, flat(h)}
end
local expires_in
if state == S.pending_review then
  local levels, level = list(h.levels), tonumber(h.level)
  if level + 1 < #levels then
    move(t, E.timeout, S.escalated)
    move(t, E.reassign, S.pending_review)
    t.upd.level = tostring(level + 1)
    expires_in = levels[level + 2].timeout_ms
  else
    local default = h.on_exhausted
    if default == S.auto_approved and h.risk ~= LOW_RISK then default = S.auto_rejected end
    if default == S.auto_approved and seal == '' and leave == '1' then
      return {R.unsigned, flat(h)}
    end
    t.actor = SYSTEM
    resolve(t, E.timeout, SR.no_response, '', '', seal)
    move(t, E.timeout, default)
    expires_in = tonumber(h.claim_ms)
  end
elseif state == S.approved or state == S.auto_approved then
  move(t, E.timeout, S.cancelled)
elseif state == S.executing then
  move(t, E.timeout, S.failed)
  move(t, E.give_up, S.manual_intervention)
else
  move(t, E.timeout, S.manual_intervention)
end
t.seal = seal  -- for the audit entry, below
return commit(t, expires_in, function(e, r, d)
  if r[1] == E.timeout then
    e.reason_code, e.text, e.view_hash = d.upd.res_reason, d.upd.res_text, ''
    if d.seal ~= '' then e.seal = d.seal end
  end
end, lean)
