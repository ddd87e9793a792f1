-- QUESTION: a question an agent asked is answered, times out or is withdrawn; the
-- first answer wins.
local Q, DUE, WAKE, EVENTS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, event = tonumber(ARGV[1]), ARGV[2]  -- event: 'answer', 'timeout' or 'cancel'
local actor, answer = ARGV[3], ARGV[4]  -- who answered, and what
local fence = ARGV[5]  -- a timer's: '' or the version it was set at (moved since: a no-op)

if redis.call('EXISTS', Q) == 0 then return {R.not_found, '{}'} end
local h = read(Q)
local function reply(code) return {code, cjson.encode(h)} end
if h.state ~= QS.open then
  if event == 'answer' and h.answered_by == actor and h.answer == answer then
    return reply(R.repeat)
  end
  if event == 'answer' then return reply(R.already_resolved) end
  return reply(R.noop)
end
local version = tonumber(h.version)
if event == 'answer' then
  if now >= tonumber(h.expires_at) then return reply(R.expired) end
  if (h.options or '') ~= '' then  -- a question with options takes one of them, verbatim
    local named = false
    for _, option in ipairs(cjson.decode(h.options)) do
      if option == answer then named = true end
    end
    if not named then return reply(R.not_an_option) end
  end
  h.state, h.answer, h.answered_by, h.answered_at = QS.answered, answer, actor, tostring(now)
elseif event == 'timeout' then
  if (fence ~= '' and tonumber(fence) ~= version) or now < tonumber(h.expires_at) then
    return reply(R.noop)
  end
  h.state = QS.expired
elseif event == 'cancel' then
  h.state = QS.cancelled
else
  return error('QUESTION takes answer, timeout or cancel, not ' .. event)
end
redis.call('ZREM', DUE, due_member(DUE_QUESTION, h))
h.version = tostring(version + 1)
redis.call('HSET', Q, 'state', h.state, 'version', h.version, 'answer', h.answer or '',
           'answered_by', h.answered_by or '', 'answered_at', h.answered_at or '')
redis.call('EXPIRE', Q, QUESTION_TTL_S)  -- final: kept as long as a run is, then gone
wake(WAKE, h.version, h.state)
publish(EVENTS, 'question', h.id, h.version, event, h.state, h.run_id)
return reply(R.ok)
