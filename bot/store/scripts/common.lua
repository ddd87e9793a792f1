-- What every script shares: reading, writing and auditing an item, and telling the
-- world it moved. The constants above this (states, events, reasons, field lists,
-- stream lengths) are rendered from Python: bot/store/scripts/common.py.

-- An item's hash as a table, exactly as stored.
local function read(key)
  local raw = redis.call('HGETALL', key)
  local h = {}
  for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
  return h
end
-- Fields that are often empty are not stored while empty (a pending request has a
-- dozen, ~140 B of memory each: bench/memory_per_request.py); a loaded request reads
-- them as '' (`fill`, above), which is what the guards compare them with.
-- A request keeps a reference to its review terms (chain, approvers, quorum, timeouts,
-- default): the first REF_LEN hex of the sha1 of their copy, kept once per shard in T
-- (bot/store/codec.py TERMS). A copy that is gone or no longer hashes to its name is
-- never guessed at: the request gets GONE's terms, which nobody passes (no chain, no
-- approver, the rejecting default), and is marked so that people's decisions and claims
-- are refused; its timers, a cancel and an executor's report still move it, so it ends
-- rather than hangs. nil: the item does not exist.
local function load(key, T)
  local h = read(key)
  if next(h) == nil then return nil end  -- no such item
  local text, terms = redis.call('HGET', T, h.terms or ''), {}  -- {}: GONE's
  if text and string.sub(redis.sha1hex(text), 1, REF_LEN) == h.terms then
    terms = cjson.decode(text)
  else
    h.terms_gone = '1'
  end
  put_terms(h, terms)
  return fill(h)
end
-- Replies are one JSON string: decoding ~70 array elements cost the client more
-- than the whole transition cost the server (bench/store_throughput.py).
local function flat(h)
  return cjson.encode(h)
end
-- Not stored: the empty values a reader puts back exactly (ALWAYS, bot/core/proof/chain.py),
-- and the all-zero prev of a first entry (~75 B of a waiting request's one entry).
local function audit(A, h, e)
  local seq = tonumber(h.audit_seq or '0') + 1
  e.seq = seq
  strip(e)
  if h.audit_head ~= nil and h.audit_head ~= '' then e.prev = h.audit_head end
  local line = cjson.encode(e)
  redis.call('RPUSH', A, line)
  h.audit_head = redis.sha1hex(line)
  h.audit_seq = tostring(seq)
end
-- The item's member in its shard's deadline index (bot/store/keys.py due_member).
local function due_member(kind, h)
  return kind .. ':' .. h.id .. '|' .. h.version
end
-- Wake whoever waits on the item (bot/store/waiting.py): the entry id is the version.
-- Only a stream a waiter made is written (WAIT, wait.lua: before it read the item), so
-- an item nobody waits on, most of them, gets no stream (0.24 of the approve's floor,
-- docs/performance.md) and keeps no day-long key after it is decided. A request's
-- scripts skip even this call unless it is marked watched (transition.lua `commit`).
local function wake(W, version, state)
  if redis.call('XADD', W, 'NOMKSTREAM', 'MAXLEN', '~', WAKE_MAXLEN, version .. '-0',
                'state', state) then
    redis.call('EXPIRE', W, WAKE_TTL_S)
  end
end
-- `run` lets the notifier keep one run's thread in order while it serves
-- other runs in parallel.
local function publish(EV, kind, id, version, event, state, run)
  redis.call('XADD', EV, 'MAXLEN', '~', EVENTS_MAXLEN, '*', 'kind', kind, 'id', id,
             'version', version, 'event', event, 'state', state, 'run', run or '')
end
