-- window.lua: the sliding-log limiter of one quota key, run atomically by Redis.
--
-- KEYS[1] clock   last decision time in ms (the clock never moves backwards)
-- KEYS[2] seq     global call counter (call id = "<ms>-<seq>")
-- then three keys per pool, in the order of the pools in ARGV:
--   log    a stream, one entry per admitted call: id "<ms>-<seq>", field u = units
--   total  the running sum of u over the log
--   block  ms until which the upstream says the pool is spent
--
-- ARGV[1] is the mode:
--   spend  ARGV: mode, ttl, then per pool: units, capacity, window
--          -> {allowed, now, seq, retry_at, per pool: used, free_at, blocked_until}
--   state  ARGV: mode, ttl, then per pool: units (dearest), capacity, window
--          -> {now, per pool: used, free_at, blocked_until}; never writes
--   block  ARGV: mode, ttl, until (one pool)  -> until now in force
--   refill ARGV: mode, ttl, then per pool: capacity, window, n, n pairs id units
--          -> number of calls added
-- ttl is how long idle keys live past their window, in ms.

local mode = ARGV[1]
local margin = tonumber(ARGV[2])

local function fmt(n) return string.format('%d', n) end

local function ms_of(id) return tonumber(string.match(id, '^(%d+)')) end

local function seq_of(id) return tonumber(string.match(id, '%-(%d+)$')) end

-- now reads Redis TIME and keeps it from going back behind the last decision.
local function now_ms()
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local last = tonumber(redis.call('GET', KEYS[1]) or '0')
  if last > now then return last end
  return now
end

local function pool_keys(i)
  local k = 2 + (i - 1) * 3
  return KEYS[k + 1], KEYS[k + 2], KEYS[k + 3]
end

-- expired sums the units of entries at or before horizon: they are outside
-- the window (now - window, now].
local function expired(log, horizon)
  local gone = redis.call('XRANGE', log, '-', fmt(horizon))
  local sum = 0
  for _, e in ipairs(gone) do sum = sum + tonumber(e[2][2]) end
  return sum, #gone
end

local function total_of(total)
  return tonumber(redis.call('GET', total) or '0')
end

-- trim drops expired entries and takes their units off the running total.
local function trim(log, total, horizon)
  local sum, n = expired(log, horizon)
  if n == 0 then return math.max(total_of(total), 0) end
  redis.call('XTRIM', log, 'MINID', fmt(horizon + 1))
  local used = redis.call('DECRBY', total, sum)
  if used <= 0 then
    redis.call('DEL', total)
    return 0
  end
  return used
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

local function blocked(block, now)
  local until_ms = tonumber(redis.call('GET', block) or '0')
  if until_ms > now then return until_ms end
  return 0
end

local function spend()
  local now = now_ms()
  local n = (#ARGV - 2) / 3
  local pools, allowed, retry, longest = {}, 1, 0, 0
  for i = 1, n do
    local log, total, block = pool_keys(i)
    local a = 3 + (i - 1) * 3
    local p = {log = log, total = total, block = block, units = tonumber(ARGV[a]),
      capacity = tonumber(ARGV[a + 1]), window = tonumber(ARGV[a + 2])}
    p.horizon = now - p.window
    p.used = trim(log, total, p.horizon)
    p.blocked = blocked(block, now)
    longest = math.max(longest, p.window)
    if p.blocked > 0 or p.used + p.units > p.capacity then
      allowed = 0
    end
    p.free = free_at(log, p.horizon, p.window, p.used, p.units, p.capacity)
    retry = math.max(retry, p.free, p.blocked)
    pools[i] = p
  end
  local ttl = longest + margin
  redis.call('SET', KEYS[1], fmt(now), 'PX', ttl)
  local seq = 0
  if allowed == 1 then
    seq = redis.call('INCR', KEYS[2])
    redis.call('PEXPIRE', KEYS[2], ttl)
    local id = fmt(now) .. '-' .. fmt(seq)
    for _, p in ipairs(pools) do
      redis.call('XADD', p.log, id, 'u', p.units)
      p.used = redis.call('INCRBY', p.total, p.units)
      redis.call('PEXPIRE', p.log, p.window + margin)
      redis.call('PEXPIRE', p.total, p.window + margin)
      p.free = free_at(p.log, p.horizon, p.window, p.used, p.units, p.capacity)
    end
    retry = 0
  end
  local out = {allowed, now, seq, retry}
  for _, p in ipairs(pools) do
    table.insert(out, p.used)
    table.insert(out, p.free)
    table.insert(out, p.blocked)
  end
  return out
end

local function state()
  local now = now_ms()
  local n = (#ARGV - 2) / 3
  local out = {now}
  for i = 1, n do
    local log, total, block = pool_keys(i)
    local a = 3 + (i - 1) * 3
    local units, capacity, window = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    local horizon = now - window
    local used = math.max(total_of(total) - expired(log, horizon), 0)
    table.insert(out, used)
    table.insert(out, free_at(log, horizon, window, used, units, capacity))
    table.insert(out, blocked(block, now))
  end
  return out
end

local function block()
  local now = now_ms()
  local until_ms = math.max(tonumber(ARGV[3]), tonumber(redis.call('GET', KEYS[5]) or '0'))
  if until_ms <= now then return 0 end
  redis.call('SET', KEYS[5], fmt(until_ms), 'PXAT', fmt(until_ms + margin))
  return until_ms
end

-- refill merges ledger calls back into the logs. Streams only take
-- increasing ids, so a log that gets an id older than its newest entry is
-- rewritten in order. Ids already present are skipped: refilling twice
-- counts once.
local function refill()
  local now = now_ms()
  local added, longest, max_ms, max_seq = {}, 0, now, 0
  local a, i = 3, 1
  while a <= #ARGV do
    local log, total = pool_keys(i)
    local capacity, window, n = tonumber(ARGV[a]), tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    local horizon = now - window
    longest = math.max(longest, window)
    trim(log, total, horizon)
    local have, entries = {}, {}
    for _, e in ipairs(redis.call('XRANGE', log, '-', '+')) do
      have[e[1]] = true
      table.insert(entries, {id = e[1], ms = ms_of(e[1]), seq = seq_of(e[1]), u = tonumber(e[2][2])})
    end
    local fresh = false
    for j = 0, n - 1 do
      local id, u = ARGV[a + 3 + 2 * j], tonumber(ARGV[a + 4 + 2 * j])
      local ms = ms_of(id)
      if ms > horizon and not have[id] then
        have[id] = true
        fresh = true
        added[id] = true
        table.insert(entries, {id = id, ms = ms, seq = seq_of(id), u = u})
      end
    end
    if fresh then
      table.sort(entries, function(x, y)
        if x.ms ~= y.ms then return x.ms < y.ms end
        return x.seq < y.seq
      end)
      redis.call('DEL', log)
      local sum = 0
      for _, e in ipairs(entries) do
        redis.call('XADD', log, e.id, 'u', e.u)
        sum = sum + e.u
        max_ms = math.max(max_ms, e.ms)
        max_seq = math.max(max_seq, e.seq)
      end
      redis.call('SET', total, fmt(sum), 'PX', window + margin)
      redis.call('PEXPIRE', log, window + margin)
    end
    a = a + 3 + 2 * n
    i = i + 1
  end
  local count = 0
  for _ in pairs(added) do count = count + 1 end
  if count > 0 then
    local ttl = longest + margin
    redis.call('SET', KEYS[1], fmt(max_ms), 'PX', ttl)
    local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
    redis.call('SET', KEYS[2], fmt(math.max(seq, max_seq)), 'PX', ttl)
  end
  return count
end

if mode == 'spend' then return spend() end
if mode == 'state' then return state() end
if mode == 'block' then return block() end
if mode == 'refill' then return refill() end
return redis.error_reply('window.lua: unknown mode ' .. tostring(mode))
