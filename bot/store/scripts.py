"""The request scripts, as named constants. Each is one atomic round trip.

Times come in as ARGV (never the server's clock), so the injected clock of the
caller is the only clock. The transition table is rendered from
`bot.core.states.TRANSITIONS`, so Lua and the pure model share one table; the
guards mirror `bot.core.machine` and a property test runs both side by side. The
helpers they share are in bot/store/lua_common.py.
"""

from __future__ import annotations

from bot.store.lua_common import COMMON, TABLES, TERMS_ERROR

__all__ = ["ALL", "CREATE", "NOOP", "TERMS_ERROR", "TRANSITION"]

# KEYS: req, audit, due, pending, all, wake, events, pending_tiers, terms
# ARGV: now, actor, records JSON [[event, from, to, reason, seal?], ...], the request hash as JSON
#       (one argument instead of ~70: packing them cost the client more than the script)
#       with `terms` naming its review terms, the terms' JSON (kept once per shard),
#       and optionally the claimer and the wake ttl seconds: an approved new request is
#       then claimed in the same step (the free path: one round trip instead of two), with
#       the audit entry, wake and event TRANSITION's claim writes.
# Optional KEYS 10 and 11: a run's correction queue and its record (one Redis only: they
#       are in the run's hash slot). A call made while a correction waits or a stop is
#       asked then creates nothing and the reply is {'steered'}: the caller takes the
#       correction first, as it would have checking before the create (a round trip less).
# Reply: {status, the stored request's hash as JSON}; on 'ok' (created) only the fields
# the script chose (state, version, expires_at, audit_head): the caller sent the rest.
CREATE = (
    COMMON
    + """
local R, A, DUE, PEND, ALL, T = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[9]
if KEYS[11] and (redis.call('LLEN', KEYS[10]) > 0
                 or redis.call('HGET', KEYS[11], 'stop_requested') == '1') then
  return {'steered', ''}
end
local now, actor, terms, claimer = tonumber(ARGV[1]), ARGV[2], ARGV[5], ARGV[6] or ''
local records = cjson.decode(ARGV[3])
local h = fill(cjson.decode(ARGV[4]))
if redis.call('EXISTS', R) == 1 then
  local given = h
  h = load(R, T)
  -- the same key must mean the same call by the same asker at the same risk
  local same = (h.payload_hash == given.payload_hash or h.original_hash == given.payload_hash)
    and h.requester == given.requester and (h.obo or '') == given.obo
    and h.risk == given.risk
  if same then return {'exists', flat(h)} end
  return {'conflict', flat(h)}
end
if string.sub(redis.sha1hex(terms), 1, REF_LEN) ~= h.terms then
  return error(TERMS_ERROR .. ' ' .. h.terms .. ' do not hash to their name')
end
local known = redis.call('HGET', T, h.terms)
if known ~= terms then
  if known and string.sub(redis.sha1hex(known), 1, REF_LEN) == h.terms then
    return error(TERMS_ERROR .. ' ' .. h.terms .. ' differ from those stored')
  end
  -- Gone, or damaged (no longer hashing to its name): the copy this call brings does,
  -- so it is the one, and the shard's requests that name it read again.
  redis.call('HSET', T, h.terms, terms)
end
local given = cjson.decode(terms)
for k in pairs(TERMS) do h[k] = given[k] end
for _, r in ipairs(records) do
  local who = actor
  if r[4] ~= '' then who = 'system' end
  audit(A, h, {at = now, actor = who, kind = 'transition', event = r[1], from = r[2], to = r[3],
               reason_code = r[4], payload_hash = h.payload_hash, version = tonumber(h.version),
               seal = r[5]})
end
local created_version, created_state = h.version, h.state
if claimer ~= '' and h.state == 'approved' then
  -- what TRANSITION's claim does; the claim deadline it replaces was never indexed
  h.state, h.version = 'executing', tostring(tonumber(h.version) + 1)
  h.expires_at = tostring(now + tonumber(h.exec_ms))
  audit(A, h, {at = now, actor = claimer, kind = 'transition', event = 'claim',
               from = 'approved', to = 'executing', payload_hash = h.payload_hash,
               version = tonumber(h.version)})
end
local args = {}
for k, v in pairs(h) do
  if v ~= '' and not TERMS[k] then args[#args + 1] = k; args[#args + 1] = v end
end
redis.call('HSET', R, unpack(args))
-- A pending request is listed in PEND only; it enters ALL when it leaves review
-- (RequestStore.ids_between reads both): one index entry less while it waits.
if h.state == 'pending_review' then
  redis.call('ZADD', PEND, h.created_at, h.id)
  redis.call('HINCRBY', KEYS[8], h.risk, 1)
else redis.call('ZADD', ALL, h.created_at, h.id) end
if h.expires_at ~= '' then redis.call('ZADD', DUE, h.expires_at, due_member(h)) end
publish(KEYS[7], 'request', h.id, created_version, 'create', created_state, h.run_id)
if h.state == 'executing' then
  redis.call('XADD', KEYS[6], 'MAXLEN', '~', '16', h.version .. '-0', 'state', h.state)
  redis.call('EXPIRE', KEYS[6], tonumber(ARGV[7]))
  publish(KEYS[7], 'request', h.id, h.version, 'claim', h.state, h.run_id)
end
-- The caller holds every other field already: it sent them.
return {'ok', cjson.encode({state = h.state, version = h.version, expires_at = h.expires_at,
                           audit_head = h.audit_head})}
"""
)

# KEYS: req, audit, due, pending, all, wake, events, pending_tiers, terms
# Reply: {status, the request's hash as JSON with its terms} and, on 'ok', the state it
# moved from.
# ARGV: now, event, actor, groups JSON, seen hash, view hash, reason code, text,
#       new args, new hash, fence, detail, has compensation (1/0), wake ttl seconds,
#       via (how a person decided: "" for a button, "thread_reply:CHANNEL:TS" for a reply),
#       lean ("1": on 'ok' reply with id, state, version, tool and run_id only),
#       expected version ('' or the version the caller signed or checked: else 'moved'),
#       seal (serve's signature of this decision, bot/core/seal.py: kept with the
#       resolution, the approval and the audit entry), forged ('' or, on a claim, why the
#       executor refuses the decision: audited as a refused claim, reply 'forged'),
#       leave ("1": a timeout that would auto-approve is left undone, reply 'unsigned':
#       a store without the key leaves approving defaults to serve's sweeper, since no
#       executor would claim an unsigned one),
#       foreign ("1": the actor is from another workspace; "*" does not count for them)
TRANSITION = (
    TABLES
    + COMMON
    + """
local R, A, DUE, PEND, ALL, W = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local now, ev, actor = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local seen, view, reason, text = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local expect, seal, forged = ARGV[17] or '', ARGV[18] or '', ARGV[19] or ''
if redis.call('EXISTS', R) == 0 then return {'not_found', '{}'} end
local h = load(R, KEYS[9])
if h.terms_gone and (HUMAN[ev] or ev == 'claim') then
  return error(TERMS_ERROR .. ' missing or damaged: ' .. R)
end
local state, version = h.state, tonumber(h.version)
-- A seal names the version it moves the request to, and a checked claim the version it
-- checked: if the request moved meanwhile, the caller reads, checks or signs again.
if expect ~= '' and tonumber(expect) ~= version then return {'moved', flat(h)} end
local cur, recs, upd = state, {}, {}

local function refuse(code)
  if HUMAN[ev] or forged ~= '' then
    audit(A, h, {at = now, actor = actor, kind = 'refused', event = ev, from = state,
                 to = state, reason_code = code, payload_hash = seen, view_hash = view,
                 version = version, via = (ARGV[15] ~= '' and ARGV[15]) or nil,
                 text = (forged ~= '' and forged) or nil})
    redis.call('HSET', R, 'audit_head', h.audit_head, 'audit_seq', h.audit_seq)
  end
  return {code, flat(h)}
end
local function resolved_or_invalid()
  if state ~= 'pending_review' and h.res_actor ~= '' then return refuse('already_resolved') end
  return refuse('invalid')
end
local function move(e, to)
  if not ALLOWED[cur .. '|' .. e .. '|' .. to] then
    return error('transition table refuses ' .. cur .. '|' .. e .. '|' .. to)
  end
  recs[#recs + 1] = {e, cur, to}
  cur = to
end
local function resolve(e, why)
  upd.res_actor, upd.res_at, upd.res_event = actor, tostring(now), e
  upd.res_reason, upd.res_text, upd.res_view = why or '', text, view
  upd.res_seal = (e ~= 'cancel' and seal) or ''
end
local function list(raw)
  local v = cjson.decode(raw)
  if type(v) ~= 'table' then return {} end
  return v
end
local expires_in = nil

if HUMAN[ev] then
  local approvals = list(h.approvals)
  local mine = false
  for _, a in ipairs(approvals) do if a[1] == actor then mine = true end end
  if ev == 'reject' then
    if h.res_event == 'reject' and h.res_actor == actor then return {'repeat', flat(h)} end
  elseif mine and (ev ~= 'edit_and_approve' or ARGV[10] == h.payload_hash)
         and (h.res_event == '' or h.res_event == 'approve'
              or h.res_event == 'edit_and_approve') then
    return {'repeat', flat(h)}
  end
  if state ~= 'pending_review' then return resolved_or_invalid() end
  if now >= tonumber(h.expires_at) then return refuse('expired') end
  local own = actor == h.requester or (h.obo ~= nil and h.obo ~= '' and actor == h.obo)
  if own and ev ~= 'reject' and h.self_approval ~= '1' then return refuse('not_eligible') end
  local ok = own and ev == 'reject'  -- saying no to one's own request is always safe
  local names = {}
  for _, n in ipairs(list(h.approvers)) do names[n] = true end
  local levels = list(h.levels)
  for i = 1, tonumber(h.level) + 1 do
    local lv = levels[i]
    if lv then
      for _, n in ipairs(lv.users or {}) do names[n] = true end
      for _, n in ipairs(lv.groups or {}) do names[n] = true end
    end
  end
  -- ARGV[21] '1': the actor is from another workspace, for whom "*" never counts
  if (names['*'] and ARGV[21] ~= '1') or names[actor] then ok = true end
  for _, g in ipairs(cjson.decode(ARGV[4])) do if names[g] then ok = true end end
  if not ok then return refuse('not_eligible') end
  if seen ~= h.payload_hash then return refuse('stale_payload') end
  if ev == 'reject' then
    if not REASONS[reason] then return refuse('invalid') end
    resolve('reject', reason)
    move('reject', 'rejected')
    move('close', 'cancelled')
  else
    if ev == 'edit_and_approve' then
      if h.allow_edit ~= '1' or ARGV[9] == '' then return refuse('invalid') end
      upd.args, upd.payload_hash = ARGV[9], ARGV[10]
      upd.original_hash = (h.original_hash ~= '' and h.original_hash) or h.payload_hash
      approvals = {}
    end
    if seal ~= '' then approvals[#approvals + 1] = {actor, now, seal}
    else approvals[#approvals + 1] = {actor, now} end
    upd.approvals = cjson.encode(approvals)
    if #approvals < tonumber(h.quorum) then
      move(ev, 'pending_review')
      expires_in = tonumber(h.expires_at) - now
    else
      resolve(ev, '')
      move(ev, 'approved')
      expires_in = tonumber(h.claim_ms)
    end
  end
elseif ev == 'timeout' then
  local fence = ARGV[11]
  if (fence ~= '' and tonumber(fence) ~= version) or FINAL[state] or h.expires_at == ''
     or now < tonumber(h.expires_at) then
    return {'noop', flat(h)}
  end
  if state == 'pending_review' then
    local levels, lvl = list(h.levels), tonumber(h.level)
    if lvl + 1 < #levels then
      move('timeout', 'escalated')
      move('reassign', 'pending_review')
      upd.level = tostring(lvl + 1)
      expires_in = levels[lvl + 2].timeout_ms
    else
      local default = h.on_exhausted
      if default == 'auto_approved' and h.risk ~= 'low' then default = 'auto_rejected' end
      if default == 'auto_approved' and seal == '' and ARGV[20] == '1' then
        return {'unsigned', flat(h)}
      end
      actor, text, view = 'system', '', ''
      resolve('timeout', 'no_response')
      move('timeout', default)
      expires_in = tonumber(h.claim_ms)
    end
  elseif state == 'approved' or state == 'auto_approved' then
    move('timeout', 'cancelled')
  elseif state == 'executing' then
    move('timeout', 'failed')
    move('give_up', 'manual_intervention')
  else
    move('timeout', 'manual_intervention')
  end
elseif ev == 'claim' then
  if state ~= 'approved' and state ~= 'auto_approved' then return resolved_or_invalid() end
  if forged ~= '' then seen = h.payload_hash; return refuse('forged_decision') end
  if h.expires_at ~= '' and now >= tonumber(h.expires_at) then return {'expired', flat(h)} end
  move('claim', 'executing')
  expires_in = tonumber(h.exec_ms)
elseif ev == 'succeed' or ev == 'fail' then
  if state ~= 'executing' then return resolved_or_invalid() end
  upd.detail = ARGV[12]
  if ev == 'succeed' then
    move('succeed', 'completed')
  else
    move('fail', 'failed')
    if ARGV[13] == '1' then
      move('compensate', 'rollback_pending')
      expires_in = tonumber(h.exec_ms)
    else
      move('give_up', 'manual_intervention')
    end
  end
elseif ev == 'rollback_ok' or ev == 'rollback_failed' then
  if state ~= 'rollback_pending' then return resolved_or_invalid() end
  upd.detail = ARGV[12]
  if ev == 'rollback_ok' then move(ev, 'rolled_back') else move(ev, 'manual_intervention') end
elseif ev == 'cancel' then
  if state ~= 'pending_review' and state ~= 'approved' and state ~= 'auto_approved' then
    return resolved_or_invalid()
  end
  if h.res_actor == '' then resolve('cancel', reason) end
  move('cancel', 'cancelled')
else
  return resolved_or_invalid()
end

redis.call('ZREM', DUE, due_member(h))
for k, v in pairs(upd) do h[k] = v end
h.state = cur
h.version = tostring(version + 1)
if FINAL[cur] or expires_in == nil then h.expires_at = '' else
  h.expires_at = tostring(now + expires_in)
  redis.call('ZADD', DUE, h.expires_at, due_member(h))
end
if state == 'pending_review' and cur ~= 'pending_review' then
  redis.call('ZREM', PEND, h.id)
  redis.call('ZADD', ALL, h.created_at, h.id)
  redis.call('HINCRBY', KEYS[8], h.risk, -1)
end
for _, r in ipairs(recs) do
  local e = {at = now, actor = actor, kind = 'transition', event = r[1], from = r[2],
             to = r[3], payload_hash = h.payload_hash, version = tonumber(h.version)}
  if HUMAN[ev] or ev == 'cancel' or r[1] == 'timeout' then
    e.reason_code, e.text, e.view_hash = upd.res_reason, upd.res_text, view
  end
  -- A cancel after an approval keeps the approval as the resolution; its own why
  -- (a refused edit, a lapsed claim) still belongs in the audit.
  if ev == 'cancel' and upd.res_reason == nil then e.reason_code, e.text = reason, text end
  if r[1] == 'edit_and_approve' then e.original_hash = h.original_hash end
  if HUMAN[ev] and ARGV[15] ~= '' then e.via = ARGV[15] end
  if seal ~= '' and r[1] == ev then e.seal = seal end
  if upd.detail then e.text = upd.detail end
  audit(A, h, e)
end
-- Write back only what moved: the request's other fields never change here.
local w = {'state', cur, 'version', h.version, 'expires_at', h.expires_at,
           'audit_head', h.audit_head, 'audit_seq', h.audit_seq}
for k, v in pairs(upd) do w[#w + 1] = k; w[#w + 1] = v end
store(R, w)
redis.call('XADD', W, 'MAXLEN', '~', '16', h.version .. '-0', 'state', cur)
redis.call('EXPIRE', W, tonumber(ARGV[14]))
publish(KEYS[7], 'request', h.id, h.version, ev, cur, h.run_id)
if ARGV[16] == '1' then
  -- A caller that only needs to know it took (`RequestStore.advance`).
  return {'ok', cjson.encode({id = h.id, state = cur, version = h.version, tool = h.tool,
                             run_id = h.run_id}), state}
end
return {'ok', flat(h), state}
"""
)

# The benchmark's baseline: a script that does nothing but answer.
NOOP = "return 1"

ALL: dict[str, str] = {"create": CREATE, "transition": TRANSITION}
