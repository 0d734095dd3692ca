-- window.lua: the sliding-log limiter of one quota key, run atomically by Redis.
--
-- KEYS[1] clock   "<ms>-<seq>:<epoch>": the last decision time (the clock never
--                 moves backwards), the call counter (call id = "<ms>-<seq>")
--                 and the epoch: a random name given when the keys were
--                 (re)created, so that a worker notices Redis lost its data
-- then three keys per pool, in the order of the pools in ARGV:
--   log    a stream, one entry per admitted call: id "<ms>-<seq>", field u = units
--   total  "<units>:<head>:<touched>": the running sum of u over the log, the ms
--          of its oldest entry (0 when empty) and when the log's TTL was last set
--   block  ms until which the upstream says the pool is spent
--
-- ARGV[1] is the mode, ARGV[2] how long idle keys outlive their window (ms):
--   spend:E  then per pool: units, capacity, window
--          -> {allowed, now, seq, retry_at, per pool: used, free_at, blocked_until}
--          or {-1} when the epoch is not E: the caller refills the window
--          from its ledger, adopts the epoch, and asks again (E = * skips it)
--   adopt  then a new epoch, the longest window -> the epoch in force
--   state  then per pool: units (the dearest), capacity, window
--          -> {now, per pool: used, free_at, blocked_until}; never writes
--   block  then until (one pool)  -> the block now in force
--   refill then per pool: capacity, window, n, n pairs of id, units
--          -> number of calls added
--
-- The fast path of spend is five commands (TIME, MGET, XADD, SET, SET): the
-- head kept in total says when nothing has left the window, so the log is
-- read only when something has, or when a refusal needs its retry time.

local mode, known = string.match(ARGV[1], '^(%a+):?(.*)$')
local margin = tonumber(ARGV[2])

local function fmt(n) return string.format('%d', n) end

local function ms_of(id) return tonumber(string.match(id, '^(%d+)')) end

local function seq_of(id) return tonumber(string.match(id, '%-(%d+)$')) end

local function pool_keys(i)
  local k = 1 + (i - 1) * 3
  return KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
end

-- read returns TIME made monotonic by the clock key, the counter, and per
-- pool {used, head, touched, blocked}, in one MGET, and the epoch.
local function read(npools)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local vals = redis.call('MGET', unpack(KEYS))
  local last, seq, epoch = 0, 0, ''
  if vals[1] then
    last, seq, epoch = string.match(vals[1], '^(%d+)%-(%d+):?(%w*)$')
    last, seq = tonumber(last), tonumber(seq)
  end
  local pools = {}
  for i = 1, npools do
    local total, block = vals[1 + (i - 1) * 3 + 2], vals[1 + (i - 1) * 3 + 3]
    local p = {used = 0, head = 0, touched = 0, blocked = tonumber(block or '0')}
    if total then
      local u, h, r = string.match(total, '^(%d+):(%d+):(%d+)$')
      p.used, p.head, p.touched = tonumber(u), tonumber(h), tonumber(r)
    end
    pools[i] = p
  end
  return math.max(now, last), seq, pools, epoch
end

local function clock_value(ms, seq, epoch)
  return string.format('%d-%d:%s', ms, seq, epoch)
end

-- expired sums the units of entries at or before horizon: they are outside
-- the window (now - window, now].
local function expired(log, horizon)
  local sum = 0
  for _, e in ipairs(redis.call('XRANGE', log, '-', fmt(horizon))) do
    sum = sum + tonumber(e[2][2])
  end
  return sum
end

local function head_of(log)
  local first = redis.call('XRANGE', log, '-', '+', 'COUNT', 1)
  if #first == 0 then return 0 end
  return ms_of(first[1][1])
end

-- trim drops the entries that left the window and takes their units off the
-- running total; it touches the log only when its head has left.
local function trim(p, horizon)
  if p.head == 0 or p.head > horizon then return false end
  p.used = math.max(p.used - expired(p.log, horizon), 0)
  redis.call('XTRIM', p.log, 'MINID', fmt(horizon + 1))
  p.head = head_of(p.log)
  if p.head == 0 then p.used = 0 end
  return true
end

-- free_at walks the oldest entries still in the window until enough units
-- have left for used + units to fit capacity: the time the last of those
-- leaves is when there is room. Walking, not oldest + window: with weighted
-- costs the oldest entry alone may free too little.
local function free_at(log, horizon, window, used, units, capacity)
  local need = used + units - capacity
  if need <= 0 then return 0 end
  local start = fmt(horizon + 1)
  local sum = 0
  while true do
    local batch = redis.call('XRANGE', log, start, '+', 'COUNT', 128)
    if #batch == 0 then return 0 end
    for _, e in ipairs(batch) do
      sum = sum + tonumber(e[2][2])
      if sum >= need then return ms_of(e[1]) + window end
    end
    start = '(' .. batch[#batch][1]
  end
end

local function save_total(p, now)
  if p.head == 0 then
    redis.call('DEL', p.total)
    return
  end
  -- The log's TTL is refreshed every margin/2, not on every call: it
  -- outlives its last write by at least window + margin/2.
  if now - p.touched >= margin / 2 then
    redis.call('PEXPIRE', p.log, p.window + margin)
    p.touched = now
  end
  redis.call('SET', p.total, string.format('%d:%d:%d', p.used, p.head, p.touched), 'PX', p.window + margin)
end

local function args3(i)
  local a = 3 + (i - 1) * 3
  return tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
end

local function spend()
  local n = (#ARGV - 2) / 3
  local now, seq, pools, epoch = read(n)
  if known ~= '*' and (known == '' or epoch ~= known) then return {-1} end
  local allowed, retry, longest = 1, 0, 0
  for i, p in ipairs(pools) do
    p.log, p.total = pool_keys(i)
    p.units, p.capacity, p.window = args3(i)
    p.horizon = now - p.window
    p.dirty = trim(p, p.horizon)
    if p.blocked <= now then p.blocked = 0 end
    longest = math.max(longest, p.window)
    if p.blocked > 0 or p.used + p.units > p.capacity then allowed = 0 end
    p.free = free_at(p.log, p.horizon, p.window, p.used, p.units, p.capacity)
    retry = math.max(retry, p.free, p.blocked)
  end
  if allowed == 1 then
    seq = seq + 1
    local id = string.format('%d-%d', now, seq)
    for _, p in ipairs(pools) do
      redis.call('XADD', p.log, id, 'u', p.units)
      p.used = p.used + p.units
      if p.head == 0 then p.head = now end
      p.dirty = true
      p.free = free_at(p.log, p.horizon, p.window, p.used, p.units, p.capacity)
    end
    retry = 0
  end
  redis.call('SET', KEYS[1], clock_value(now, seq, epoch), 'PX', longest + margin)
  local out = {allowed, now, 0, retry}
  if allowed == 1 then out[3] = seq end
  for _, p in ipairs(pools) do
    if p.dirty then save_total(p, now) end
    table.insert(out, p.used)
    table.insert(out, p.free)
    table.insert(out, p.blocked)
  end
  return out
end

local function state()
  local n = (#ARGV - 2) / 3
  local now, _, pools = read(n)
  local out = {now}
  for i, p in ipairs(pools) do
    local log = pool_keys(i)
    local units, capacity, window = args3(i)
    local horizon = now - window
    if p.head > 0 and p.head <= horizon then
      p.used = math.max(p.used - expired(log, horizon), 0)
      if #redis.call('XRANGE', log, fmt(horizon + 1), '+', 'COUNT', 1) == 0 then p.used = 0 end
    end
    if p.blocked <= now then p.blocked = 0 end
    table.insert(out, p.used)
    table.insert(out, free_at(log, horizon, window, p.used, units, capacity))
    table.insert(out, p.blocked)
  end
  return out
end

local function block()
  local now, _, pools = read(1)
  local until_ms = math.max(tonumber(ARGV[3]), pools[1].blocked)
  if until_ms <= now then return 0 end
  redis.call('SET', KEYS[4], fmt(until_ms), 'PXAT', fmt(until_ms + margin))
  return until_ms
end

-- refill merges ledger calls back into the logs. Streams only take
-- increasing ids, so a log that gets an id older than its newest entry is
-- rewritten in order. Ids already present are skipped: refilling twice
-- counts once.
local function refill()
  local npools, a = 0, 3
  while a <= #ARGV do
    npools = npools + 1
    a = a + 3 + 2 * tonumber(ARGV[a + 2])
  end
  local now, seq, pools, epoch = read(npools)
  local added, longest, max_ms = {}, 0, now
  a = 3
  for i, p in ipairs(pools) do
    p.log, p.total = pool_keys(i)
    local capacity, window, n = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    p.window = window
    local horizon = now - window
    longest = math.max(longest, window)
    if trim(p, horizon) then save_total(p, now) end
    local have, entries = {}, {}
    for _, e in ipairs(redis.call('XRANGE', p.log, '-', '+')) do
      have[e[1]] = true
      table.insert(entries, {id = e[1], ms = ms_of(e[1]), seq = seq_of(e[1]), u = tonumber(e[2][2])})
    end
    local fresh = false
    for j = 0, n - 1 do
      local id, u = ARGV[a + 3 + 2 * j], tonumber(ARGV[a + 4 + 2 * j])
      local ms = ms_of(id)
      if ms > horizon and not have[id] then
        have[id], added[id], fresh = true, true, true
        table.insert(entries, {id = id, ms = ms, seq = seq_of(id), u = u})
      end
    end
    if fresh then
      table.sort(entries, function(x, y)
        if x.ms ~= y.ms then return x.ms < y.ms end
        return x.seq < y.seq
      end)
      redis.call('DEL', p.log)
      p.used = 0
      for _, e in ipairs(entries) do
        redis.call('XADD', p.log, e.id, 'u', e.u)
        p.used = p.used + e.u
        max_ms, seq = math.max(max_ms, e.ms), math.max(seq, e.seq)
      end
      p.head, p.touched = entries[1].ms, 0
      save_total(p, now)
    end
    a = a + 3 + 2 * n
  end
  local count = 0
  for _ in pairs(added) do count = count + 1 end
  if count > 0 then
    redis.call('SET', KEYS[1], clock_value(max_ms, seq, epoch), 'PX', longest + margin)
  end
  return count
end

-- adopt names the keys' epoch when they have none yet (Redis is new, was
-- flushed, or the keys expired while idle) and returns the one in force.
local function adopt()
  local now, seq, _, epoch = read(0)
  if epoch ~= '' then return epoch end
  redis.call('SET', KEYS[1], clock_value(now, seq, ARGV[3]), 'PX', tonumber(ARGV[4]) + margin)
  return ARGV[3]
end

if mode == 'spend' then return spend() end
if mode == 'adopt' then return adopt() end
if mode == 'state' then return state() end
if mode == 'block' then return block() end
if mode == 'refill' then return refill() end
return redis.error_reply('window.lua: unknown mode ' .. tostring(mode))
