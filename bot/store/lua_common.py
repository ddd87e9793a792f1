"""What every request script shares: the rendered tables (the transition table, final
states, the stored-field lists) and the Lua helpers that load, store and audit a request.

The audit chain uses `redis.sha1hex` because it is the hash Lua has inside the
atomic step; the chain proves order and integrity against edits that do not
recompute it, and `payload_hash` (sha256, computed in Python) binds decisions.
"""

from __future__ import annotations

from bot.core.chain import ALWAYS
from bot.core.states import FINAL, HUMAN_EVENTS, TRANSITIONS, ReasonCode
from bot.store.codec import GONE, OPTIONAL, REF_LEN, TERMS

# How the scripts' errors about a request's review terms start; callers match it.
TERMS_ERROR = "hitl: review terms"


def lua_set(names: object) -> str:
    return "{" + ", ".join(f'["{n}"]=true' for n in names) + "}"  # type: ignore[attr-defined]


TABLES = f"""
local ALLOWED = {lua_set(f"{a.value}|{e.value}|{b.value}" for a, e, b in TRANSITIONS)}
local FINAL = {lua_set(s.value for s in FINAL)}
local HUMAN = {lua_set(e.value for e in HUMAN_EVENTS)}
local REASONS = {lua_set(r.value for r in ReasonCode)}
"""

# Shared helpers: `h` is the request hash as a table; `audit` appends one
# chained entry and advances the head kept in the request itself.
COMMON = (
    "local OPTIONAL = {"
    + ", ".join(f"'{f}'" for f in OPTIONAL)
    + "}\n"
    + f"local TERMS = {lua_set(TERMS)}\n"
    + f"local TERMS_ERROR = '{TERMS_ERROR}'\n"
    + "local GONE = {"
    + ", ".join(f"{k} = '{v}'" for k, v in GONE.items())
    + f"}}\nlocal REF_LEN = {REF_LEN}\n"
    + "local ALWAYS = {"
    + ", ".join(f"['{g}'] = {{'" + "', '".join(ks) + "'}" for g, ks in ALWAYS.items())
    + "}\n"
    + """
-- Fields that are often empty are not stored while empty (a pending request has a
-- dozen, ~140 B of memory each: bench/memory_per_request.py); a loaded request reads
-- them as '' again, so the guards below compare them as they always did.
local function fill(h)
  for _, k in ipairs(OPTIONAL) do if h[k] == nil then h[k] = '' end end
  return h
end
-- A request keeps a reference to its review terms (chain, approvers, quorum, timeouts,
-- default): the first REF_LEN hex of the sha1 of their copy, kept once per shard in T
-- (bot/store/codec.py TERMS); a request stored before keeps them inline. A copy that is
-- gone or no longer hashes to its name is never guessed at: the request gets GONE's
-- terms, which nobody passes (no chain, no approver, the rejecting default), and is
-- marked so that TRANSITION refuses people's decisions and claims; its timers, a cancel
-- and an executor's report still move it, so it ends rather than hangs.
local function load(key, T)
  local raw = redis.call('HGETALL', key)
  local h = {}
  for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
  if h.terms ~= nil and h.terms ~= '' then
    local text, terms = redis.call('HGET', T, h.terms), GONE
    if text and string.sub(redis.sha1hex(text), 1, REF_LEN) == h.terms then
      terms = cjson.decode(text)
    else
      h.terms_gone = '1'
    end
    for k in pairs(TERMS) do if h[k] == nil then h[k] = terms[k] or GONE[k] end end
  end
  return fill(h)
end
-- HSET what has a value and HDEL what went empty.
local function store(key, pairs_)
  local set, gone = {}, {}
  for i = 1, #pairs_, 2 do
    if pairs_[i + 1] == '' then gone[#gone + 1] = pairs_[i] else
      set[#set + 1] = pairs_[i]; set[#set + 1] = pairs_[i + 1]
    end
  end
  if #set > 0 then redis.call('HSET', key, unpack(set)) end
  if #gone > 0 then redis.call('HDEL', key, unpack(gone)) end
end
-- Replies are one JSON string: decoding ~70 array elements cost the client more
-- than the whole transition cost the server (bench/store_throughput.py).
local function flat(h)
  return cjson.encode(h)
end
-- Not stored: the empty values a reader puts back exactly (ALWAYS, bot/core/chain.py),
-- and the all-zero prev of a first entry (~75 B of a waiting request's one entry).
local function audit(A, h, e)
  local seq = tonumber(h.audit_seq or '0') + 1
  e.seq = seq
  for _, group in ipairs({'*', e.kind, e.event}) do
    for _, k in ipairs(ALWAYS[group] or {}) do if e[k] == '' then e[k] = nil end end
  end
  if h.audit_head ~= nil and h.audit_head ~= '' then e.prev = h.audit_head end
  local line = cjson.encode(e)
  redis.call('RPUSH', A, line)
  h.audit_head = redis.sha1hex(line)
  h.audit_seq = tostring(seq)
end
local function due_member(h)
  return 'req:' .. h.id .. '|' .. h.version
end
-- `run` lets the notifier keep one run's thread in order while it serves
-- other runs in parallel.
local function publish(EV, kind, id, version, event, state, run)
  redis.call('XADD', EV, 'MAXLEN', '~', '100000', '*', 'kind', kind, 'id', id,
             'version', version, 'event', event, 'state', state, 'run', run or '')
end
"""
)
