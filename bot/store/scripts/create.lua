-- CREATE: a new request, or the one its idempotency key already names. An approved new
-- request is claimed in the same step when a claimer is given (the free path: one
-- round trip instead of two), audited and published as CLAIM would.
local K = request_keys()
-- optional (one Redis, a call under a run): the run's index of its requests; then,
-- optional: the run's correction queue, record and set of requests it waits on
local run_requests = KEYS[10]
local steering, run, waiting = KEYS[11], KEYS[12], KEYS[13]
local now, requester = tonumber(ARGV[1]), ARGV[2]
local records = cjson.decode(ARGV[3])  -- [[event, from, to, reason, seal?], ...]
-- The request's hash as JSON (one argument instead of ~70: packing them cost the client
-- more than the script), `terms` naming its review terms.
local h = fill(cjson.decode(ARGV[4]))
local terms = ARGV[5]  -- the review terms' JSON, kept once per shard
local claimer = ARGV[6] or ''  -- '' or the executor that claims an approved new request
local token = ARGV[7] or ''  -- and its claim token (bot/core/proof/fence.py)

-- A run's correction queue and record are in the run's hash slot (one Redis only): a
-- call made while a correction waits or a stop is asked creates nothing, and the
-- caller takes the correction first, as it would have checking before the create.
if run and (redis.call('LLEN', steering) > 0
            or redis.call('HGET', run, 'stop_requested') == '1') then
  return {R.steered, ''}
end
if redis.call('EXISTS', K.req) == 1 then
  local given = h
  h = load(K.req, K.terms)
  -- the same key must mean the same call by the same asker at the same risk
  local same = (h.payload_hash == given.payload_hash or h.original_hash == given.payload_hash)
    and h.requester == given.requester and h.obo == given.obo and h.risk == given.risk
  if same then return {R.exists, flat(h)} end
  return {R.conflict, flat(h)}
end
if string.sub(redis.sha1hex(terms), 1, REF_LEN) ~= h.terms then
  return error(TERMS_ERROR .. ' ' .. h.terms .. ' do not hash to their name')
end
local known = redis.call('HGET', K.terms, h.terms)
if known ~= terms then
  if known and string.sub(redis.sha1hex(known), 1, REF_LEN) == h.terms then
    return error(TERMS_ERROR .. ' ' .. h.terms .. ' differ from those stored')
  end
  -- Gone, or damaged (no longer hashing to its name): the copy this call brings does,
  -- so it is the one, and the shard's requests that name it read again.
  redis.call('HSET', K.terms, h.terms, terms)
end
local given, TERMS = cjson.decode(terms), TERMS()
for k in pairs(TERMS) do h[k] = given[k] end
for _, r in ipairs(records) do
  local who = requester
  if r[4] ~= '' then who = SYSTEM end
  local e = {at = now, actor = who, kind = 'transition', event = r[1], from = r[2],
             to = r[3], reason_code = r[4], payload_hash = h.payload_hash,
             version = tonumber(h.version), seal = r[5]}
  -- a proposal's candidates, by hash, as the card shows them (bot/core/candidates.py)
  if h.cand_hashes ~= '' and r[1] == E.create then e.candidates = list(h.cand_hashes) end
  audit(K.audit, h, e)
end
local created_version, created_state = h.version, h.state
if claimer ~= '' and h.state == S.approved then
  -- CLAIM's move, in memory: the claim deadline it replaces is never indexed
  local t = start(K, h, now, E.claim, claimer)
  settle(t, claim(t, token))
  audit_moves(t, function(e, _, d) e.fence = d.h.fence end)
end
local args = {}
for k, v in pairs(h) do
  if v ~= '' and not TERMS[k] then args[#args + 1] = k; args[#args + 1] = v end
end
redis.call('HSET', K.req, unpack(args))
-- A pending request is listed in PENDING only; it enters ALL when it leaves review
-- (RequestStore.ids_between reads both): one index entry less while it waits.
if h.state == S.pending_review then
  redis.call('ZADD', K.pending, h.created_at, h.id)
  -- one count per tier and identity (bot/store/pending_count.py): one command
  redis.call('HINCRBY', K.tiers, h.risk .. ':' .. h.requester, 1)
else redis.call('ZADD', K.all, h.created_at, h.id) end
if h.expires_at ~= '' then redis.call('ZADD', K.due, h.expires_at, due_member(DUE_REQUEST, h)) end
-- In the same step as the correction check above: a correction queued after this is
-- sure to find the request (bot/gate/corrections.py).
if waiting and h.state == S.pending_review then
  redis.call('SADD', waiting, h.id)
  redis.call('EXPIRE', waiting, WAITING_TTL_S)
end
-- The run's index of its calls, in the same step: `show RUN` reads it (a cluster
-- writes it in a step of its own, bot/store/run/run_requests.py).
if run_requests then
  redis.call('ZADD', run_requests, 'NX', h.created_at, h.id)
  redis.call('EXPIRE', run_requests, WAITING_TTL_S)
end
publish(K.events, 'request', h.id, created_version, E.create, created_state, h.run_id)
-- Nobody waits on it yet: a waiter makes the wake stream of an item that exists only
-- (wait.lua), and reads it after, so it sees the claim.
if h.state == S.executing then
  publish(K.events, 'request', h.id, h.version, E.claim, h.state, h.run_id)
end
-- The caller holds every other field already: it sent them.
return {R.ok, cjson.encode({state = h.state, version = h.version, expires_at = h.expires_at,
                           audit_head = h.audit_head, fence = h.fence})}
