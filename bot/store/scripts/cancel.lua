-- CANCEL: the run was stopped, or an operator withdrew the request, before it ran.
local K = request_keys()
local now, actor = tonumber(ARGV[1]), ARGV[2]
local expect, lean = ARGV[3], ARGV[4]  -- see `begin` and `commit`
local reason, text, view = ARGV[5], ARGV[6], ARGV[7]  -- why, in a code and in words

local t, done = begin(K, now, E.cancel, actor, expect, false)
if not t then return done end
local s = t.state
if s ~= S.pending_review and s ~= S.approved and s ~= S.auto_approved then
  return resolved_or_invalid(t)
end
if t.h.res_actor == '' then resolve(t, E.cancel, reason, text, view, '') end
move(t, E.cancel, S.cancelled)
t.reason, t.text, t.view = reason, text, view  -- for the audit entry, below
return commit(t, nil, function(e, _, d)
  e.reason_code, e.text, e.view_hash = d.upd.res_reason, d.upd.res_text, d.view
  -- A cancel after an approval keeps the approval as the resolution; its own why
  -- (a refused edit, a lapsed claim) still belongs in the audit.
  if d.upd.res_reason == nil then e.reason_code, e.text = d.reason, d.text end
end, lean)
