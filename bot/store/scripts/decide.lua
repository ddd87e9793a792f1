-- DECIDE: a person approves, edits and approves, or rejects a request in review.
local K = request_keys()
local now, event, actor = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local expect, lean = ARGV[4], ARGV[5]  -- see `begin` and `commit`
local groups = ARGV[6]  -- the actor's groups and channels (JSON), read if needed
local seen, view = ARGV[7], ARGV[8]  -- the payload hash and the card's hash they saw
local reason, text = ARGV[9], ARGV[10]  -- a rejection's code and words
local new_args, new_hash = ARGV[11], ARGV[12]  -- an edit's arguments and their hash
local via = ARGV[13]  -- how they decided: '' a button, 'thread_reply:CHANNEL:TS' a reply
local seal = ARGV[14]  -- serve's signature (bot/core/proof/seal.py): kept with the decision
local foreign = ARGV[15]  -- '1': the actor is from another workspace: '*' never counts
if not is(HUMAN, event) then return error('DECIDE takes a person\'s decision, not ' .. event) end

local t, done = begin(K, now, event, actor, expect, true)
if not t then return done end
local h = t.h
local entry = {payload_hash = seen, view_hash = view, via = (via ~= '' and via) or nil}

local approvals = {}  -- none yet, the usual case: nothing to decode
if h.approvals ~= '[]' then approvals = list(h.approvals) end
local mine = false
for _, a in ipairs(approvals) do if a[1] == actor then mine = true end end
if event == E.reject then
  if h.res_event == E.reject and h.res_actor == actor then return {R.repeat, flat(h)} end
elseif mine and (event ~= E.edit_and_approve or new_hash == h.payload_hash)
       and (h.res_event == '' or h.res_event == E.approve
            or h.res_event == E.edit_and_approve) then
  return {R.repeat, flat(h)}
end
if t.state ~= S.pending_review then return resolved_or_invalid(t, entry) end
if now >= tonumber(h.expires_at) then return refuse(t, R.expired, entry) end
local own = actor == h.requester or (h.obo ~= '' and actor == h.obo)
if own and event ~= E.reject and h.self_approval ~= '1' then
  return refuse(t, R.not_eligible, entry)
end
local ok = own and event == E.reject  -- saying no to one's own request is always safe
-- Who may decide: the approvers, then the chain's levels up to the current one, then
-- the actor's groups; each is decoded only while the answer is still no.
local names = {}
if not ok then
  for _, n in ipairs(list(h.approvers)) do names[n] = true end
  ok = (names['*'] and foreign ~= '1') or names[actor]
end
if not ok then
  local levels = list(h.levels)
  for i = 1, tonumber(h.level) + 1 do
    local lv = levels[i]
    if lv then
      for _, n in ipairs(lv.users or {}) do names[n] = true end
      for _, n in ipairs(lv.groups or {}) do names[n] = true end
    end
  end
  ok = (names['*'] and foreign ~= '1') or names[actor]
  if not ok then
    for _, g in ipairs(cjson.decode(groups)) do if names[g] then ok = true end end
  end
end
if not ok then return refuse(t, R.not_eligible, entry) end
-- A proposal (bot/core/candidates.py) was seen under its own hash, kept as the
-- original once a candidate is chosen; it approves only by choosing a candidate.
local proposal = h.cand_hashes ~= ''
local shown = h.payload_hash
if proposal and h.original_hash ~= '' then shown = h.original_hash end
if seen ~= shown then return refuse(t, R.stale_payload, entry) end

local expires_in
if event == E.reject then
  if not REASONS()[reason] then return refuse(t, R.invalid, entry) end
  resolve(t, E.reject, reason, text, view, seal)
  move(t, E.reject, S.rejected)
  move(t, E.close, S.cancelled)
else
  if proposal then
    if event ~= E.edit_and_approve or new_args == '' then return refuse(t, R.invalid, entry) end
    local known = false
    for _, c in ipairs(list(h.cand_hashes)) do if c == new_hash then known = true end end
    if not known then return refuse(t, R.invalid, entry) end
    if new_hash ~= h.payload_hash then  -- another candidate: the count starts again
      t.upd.args, t.upd.payload_hash = new_args, new_hash
      t.upd.original_hash = (h.original_hash ~= '' and h.original_hash) or h.payload_hash
      approvals = {}
    end
  elseif event == E.edit_and_approve then
    if h.allow_edit ~= '1' or new_args == '' then return refuse(t, R.invalid, entry) end
    t.upd.args, t.upd.payload_hash = new_args, new_hash
    t.upd.original_hash = (h.original_hash ~= '' and h.original_hash) or h.payload_hash
    t.upd.original_args = (h.original_args ~= '' and h.original_args) or h.args
    approvals = {}
  end
  if seal ~= '' then approvals[#approvals + 1] = {actor, now, seal}
  else approvals[#approvals + 1] = {actor, now} end
  t.upd.approvals = cjson.encode(approvals)
  if #approvals < tonumber(h.quorum) then
    move(t, event, S.pending_review)
    expires_in = tonumber(h.expires_at) - now
  else
    -- an approval under a standing grant names it (bot/core/grants.py GRANT_REASON),
    -- one confirmed with a passkey its credential (bot/core/stepup.py VIA)
    local kept = (event == E.approve and reason:sub(1, 6) == 'grant:')
                 or reason:sub(1, 8) == 'passkey:'
    resolve(t, event, (kept and reason) or '', text, view, seal)
    move(t, event, S.approved)
    expires_in = tonumber(h.claim_ms)
  end
end
-- What each audited move records, read from the transition `commit` hands it: a
-- function that names few locals of this script is cheap to make (each one it names
-- is looked up among every local the helpers hold).
t.view, t.via, t.seal, t.new_hash, t.proposal = view, via, seal, new_hash, proposal
return commit(t, expires_in, function(e, r, d)
  e.reason_code, e.text, e.view_hash = d.upd.res_reason, d.upd.res_text, d.view
  if r[1] == E.edit_and_approve then e.original_hash = d.h.original_hash end
  if d.via ~= '' then e.via = d.via end
  if d.proposal and r[1] == d.event then  -- the choice, among the candidates shown
    e.chosen, e.candidates = d.new_hash, list(d.h.cand_hashes)
  end
  if d.seal ~= '' and r[1] == d.event then e.seal = d.seal end
end, lean)
