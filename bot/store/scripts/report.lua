-- REPORT: the executor reports how the call, or its compensation, went.
local K = request_keys()
local now, event, actor = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local expect, lean = ARGV[4], ARGV[5]  -- see `begin` and `commit`
local detail = ARGV[6]  -- what the executor says of it, kept on the request and audited
local compensation = ARGV[7]  -- '1': a compensating action exists (a failure rolls back)
-- '' or the fence the executor's claim handed it: another claim's (this one was lost in
-- a failover and the request claimed again) is refused and audited, whatever the state
local fence = ARGV[8] or ''

local t, done = begin(K, now, event, actor, expect, false)
if not t then return done end
if fence ~= '' and fence ~= t.h.fence then
  local entry = {text = detail, payload_hash = t.h.payload_hash, fence = fence}
  return refuse(t, R.stale_fence, entry)
end
local expires_in
if event == E.succeed or event == E.fail then
  if t.state ~= S.executing then return resolved_or_invalid(t) end
  t.upd.detail = detail
  if event == E.succeed then
    move(t, E.succeed, S.completed)
  else
    move(t, E.fail, S.failed)
    if compensation == '1' then
      move(t, E.compensate, S.rollback_pending)
      expires_in = tonumber(t.h.exec_ms)
    else
      move(t, E.give_up, S.manual_intervention)
    end
  end
elseif event == E.rollback_ok or event == E.rollback_failed then
  if t.state ~= S.rollback_pending then return resolved_or_invalid(t) end
  t.upd.detail = detail
  if event == E.rollback_ok then move(t, event, S.rolled_back)
  else move(t, event, S.manual_intervention) end
else
  return error('REPORT takes an executor\'s report, not ' .. event)
end
t.detail = detail  -- for the audit entry, below
return commit(t, expires_in, function(e, _, d) e.text = d.detail end, lean)
