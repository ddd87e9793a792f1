-- What the transition scripts share: a transition `t` is the request as loaded (t.h),
-- the state and version it stood at, the moves made (t.recs) and the fields that
-- change (t.upd). Each script checks its own guards, makes its moves and commits.

-- A transition of the request h, already loaded: CREATE's claim starts here.
local function start(K, h, now, event, actor)
  local t = {K = K, h = h, now = now, event = event, actor = actor, state = h.state,
             version = tonumber(h.version), recs = {}, upd = {}}
  t.cur = t.state
  return t
end
-- The transition, or the reply that ends the script first. `terms`: the script acts
-- on the request's review terms (a person's decision, a claim), so a request whose
-- terms are gone is refused. `expect`: '' or the version the caller signed or checked
-- (a seal names the version it moves the request to): moved since, the caller reads,
-- checks or signs again.
local function begin(K, now, event, actor, expect, terms)
  local h = load(K.req, K.terms)  -- one HGETALL answers whether it exists too
  if h == nil then return nil, {R.not_found, '{}'} end
  if terms and h.terms_gone then
    return error(TERMS_ERROR .. ' missing or damaged: ' .. K.req)
  end
  if expect ~= '' and tonumber(expect) ~= tonumber(h.version) then
    return nil, {R.moved, flat(h)}
  end
  return start(K, h, now, event, actor)
end
local function list(raw)
  local v = cjson.decode(raw)
  if type(v) ~= 'table' then return {} end
  return v
end
-- A refusal; `entry` (the fields a refusal of this kind audits) audits it too.
local function refuse(t, code, entry)
  if entry then
    entry.at, entry.actor, entry.kind, entry.event = t.now, t.actor, 'refused', t.event
    entry.from, entry.to, entry.reason_code, entry.version = t.state, t.state, code, t.version
    audit(t.K.audit, t.h, entry)
    redis.call('HSET', t.K.req, 'audit_head', t.h.audit_head, 'audit_seq', t.h.audit_seq)
  end
  return {code, flat(t.h)}
end
local function resolved_or_invalid(t, entry)
  if t.state ~= S.pending_review and t.h.res_actor ~= '' then
    return refuse(t, R.already_resolved, entry)
  end
  return refuse(t, R.invalid, entry)
end
local function move(t, e, to)
  local k = t.cur .. '|' .. e .. '|' .. to  -- one line of ALLOWED, or none
  if string.find(k, '\n', 1, true) or not string.find(ALLOWED, '\n' .. k .. '\n', 1, true) then
    return error('transition table refuses ' .. t.cur .. '|' .. e .. '|' .. to)
  end
  t.recs[#t.recs + 1] = {e, t.cur, to}
  t.cur = to
end
-- What the request keeps of the decision that settles it.
local function resolve(t, e, why, text, view, seal)
  local u = t.upd
  u.res_actor, u.res_at, u.res_event = t.actor, tostring(t.now), e
  u.res_reason, u.res_text, u.res_view, u.res_seal = why or '', text, view, seal
end
-- approved -> executing: the CLAIM script's move, and CREATE's for a call it claims at
-- once. The fence names the version the claim moves the request to and the executor's
-- `token` (bot/core/proof/fence.py): a claim lost in a failover and the next one share the
-- version, never the token. Returns how long the execution may take.
local function claim(t, token)
  move(t, E.claim, S.executing)
  t.upd.fence = tostring(t.version + 1) .. '.' .. token
  return tonumber(t.h.exec_ms)
end
-- The same executor retrying its claim (it sends the token it claimed with): the claim
-- it already holds, nothing written.
local function same_claim(t, token)
  if t.state ~= S.executing or token == '' then return false end
  local dot = string.find(t.h.fence, '.', 1, true)
  return dot ~= nil and string.sub(t.h.fence, dot + 1) == token
end
-- The moves applied to t.h: the new state and version, and the deadline `expires_in`
-- from now (none once final).
local function settle(t, expires_in)
  local h = t.h
  for k, v in pairs(t.upd) do h[k] = v end
  h.state, h.version = t.cur, tostring(t.version + 1)
  if is(FINAL, t.cur) or expires_in == nil then h.expires_at = '' else
    h.expires_at = tostring(t.now + expires_in)
  end
end
-- One audit entry per move; `dress(e, r, t)` adds what the script's event records.
local function audit_moves(t, dress)
  for _, r in ipairs(t.recs) do
    local e = {at = t.now, actor = t.actor, kind = 'transition', event = r[1], from = r[2],
               to = r[3], payload_hash = t.h.payload_hash, version = tonumber(t.h.version)}
    if dress then dress(e, r, t) end
    audit(t.K.audit, t.h, e)
  end
end
-- Write the transition: deadline, indexes, audit, the fields that moved, wake and
-- event. `lean` '1': reply with id, state, version, tool and run_id only (a caller
-- that needs only to know it took: RequestStore.advance).
local function commit(t, expires_in, dress, lean)
  local h, K = t.h, t.K
  -- Write back only what moved (the request's other fields never change here); empty
  -- fields are not stored, so only one that held a value is deleted.
  local w, gone = {'state', t.cur, 'version', tostring(t.version + 1)}, {}
  for k, v in pairs(t.upd) do
    if v ~= '' then w[#w + 1] = k; w[#w + 1] = v elseif h[k] ~= '' then gone[#gone + 1] = k end
  end
  local had_deadline = h.expires_at ~= ''
  redis.call('ZREM', K.due, due_member(DUE_REQUEST, h))
  settle(t, expires_in)
  if h.expires_at ~= '' then redis.call('ZADD', K.due, h.expires_at, due_member(DUE_REQUEST, h)) end
  -- A pending request is listed in PENDING only; it enters ALL as it leaves review.
  if t.state == S.pending_review and t.cur ~= S.pending_review then
    redis.call('ZREM', K.pending, h.id)
    redis.call('ZADD', K.all, h.created_at, h.id)
    local counted = h.risk .. ':' .. h.requester  -- bot/store/pending_count.py
    if redis.call('HINCRBY', K.tiers, counted, -1) <= 0 then
      redis.call('HDEL', K.tiers, counted)
    end
  end
  audit_moves(t, dress)
  w[#w + 1] = 'audit_head'; w[#w + 1] = h.audit_head
  w[#w + 1] = 'audit_seq'; w[#w + 1] = h.audit_seq
  if h.expires_at ~= '' then w[#w + 1] = 'expires_at'; w[#w + 1] = h.expires_at
  elseif had_deadline then gone[#gone + 1] = 'expires_at' end
  redis.call('HSET', K.req, unpack(w))
  if #gone > 0 then redis.call('HDEL', K.req, unpack(gone)) end
  -- Only a request someone waited on (codec.py WATCHED; its stream may have expired
  -- since: `wake` then writes nothing).
  if h.watched then wake(K.wake, h.version, t.cur) end
  publish(K.events, 'request', h.id, h.version, t.event, t.cur, h.run_id)
  -- The moves too (event, from, to), so the caller logs one line per audited step; ''
  -- for the one move of the event itself, the caller's own (bot/store/transition_argv.py).
  local moves = ''
  if #t.recs ~= 1 or t.recs[1][1] ~= t.event then moves = cjson.encode(t.recs) end
  if lean == '1' then
    return {R.ok, cjson.encode({id = h.id, state = t.cur, version = h.version, tool = h.tool,
                               run_id = h.run_id}), t.state, moves}
  end
  return {R.ok, flat(h), t.state, moves}
end
