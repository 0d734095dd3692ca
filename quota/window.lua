-- window.lua: the limiter of one quota key, run atomically by Redis.
--
-- Every pool is a sliding log (a stream, one entry per admitted call: id
-- "<ms>-<seq>", field u = units) with a running account kept beside it, so
-- that a decision rarely reads the log. The account is cumulative: cum is
-- every unit ever appended, wbase the units of entries that left the window
-- (those at or before wh), dbase the units of entries before the current
-- calendar day (which starts at ds). Used in the window is cum - wbase, used
-- today is cum - dbase. Entries leave the log once they are out of both.
--
-- KEYS: clock, reg, recover, then five per pool, in the order of the pools:
--   clock    "<ms>-<seq>:<epoch>:<wait>": the last decision time (the clock
--            never goes back), the call counter, the keys' generation, and
--            until when a recovery holds every pool (0: none)
--   reg      hash worker -> ms of its last registration (the register)
--   recover  hash of the recovery after a loss: since, need (workers that
--            must refill, comma separated; absent until a worker vouches),
--            done:<worker> -> ms
--   log      the stream
--   total    "cum:wbase:wh:dbase:ds:head:touched:fT:fAt" (fT/fAt: the last
--            retry time computed, for cumulative target fT)
--   block    ms until which the upstream says the pool is spent
--   conf     "limit:reserve:window:day": the pool as every worker must see it
--   wait     ms until which the pool admits nothing metered after a loss
-- and for spend two more at the end: the instance's receipts ring and fence
-- (see receipt and reconcile).
--
-- ARGV[1] mode, ARGV[2] how long idle keys outlive what they guard (ms),
-- ARGV[3] an offset added to TIME (0 but in tests), then by mode:
--   spend   epoch, known seq, worker, register(0/1), worker ms, guard ms,
--           token, then per pool: units, conf (capacity and window are read
--           from it), "d1,d2,d3,d4" day starts ("0": none)
--           -> {1|0, now, seq, retry, suspect, per pool: used, used_day,
--               free_at, blocked, wait}
--           or {-1, epoch, seq}  the keys are new or of another generation
--           or {-2, i, stored}   pool i's conf differs from the caller's
--           or {-3, seq}         the counter went back or a pool lost data
--           or {-4, now}         the limiter's clock is over a day from the caller's
--           or {-5, seq}         the token was given up on and reconciled (fenced)
--   reconcile  (KEYS: ring, fence) ttl, tokens -> per token: id, '' or '?'
--   state   per pool as spend but no token (read only) -> {now, seq, epoch, need, done,
--           per pool: used, used_day, free_at, blocked, wait}
--   block   per pool (one): 4 day starts -> until (the next day start)
--   refill  worker, then per pool: capacity, window, 4 day starts, block
--           until, n, n pairs of id, units -> calls added
--   adopt   new epoch, ttl, known seq -> the epoch in force
--   lost    epoch, known seq, need (comma list or ''), ttl, then per
--           pool: window, 4 day starts -> the epoch (each pool waits until
--           its window and its current day have passed)
--   release -> 1 (an operator restored the ledgers: the wait ends)
--   refund  id, then per pool: units -> entries removed (a call that never
--           reached the upstream)
--   conf    then per pool: conf -> per pool: the stored conf or ''
--   apply   ttl, then per pool: conf -> 1
--   heartbeat  worker, ttl, register(0/1) -> {now, seq, epoch, worker, ms, ...}

-- The file is a library: it only defines functions, and main runs one
-- call. Go loads it once as a Redis Function (FUNCTION LOAD, then FCALL),
-- so that none of this is rebuilt per call; or, where functions are not to
-- be had, wraps it for EVALSHA. KEYS and ARGV are the call's, set by main.
local KEYS, ARGV
local mode, margin, offset -- offset: 0 but in tests, which move the clock
local NPK = 5 -- keys per pool

local function time_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + offset
end

local function fmt(n) return string.format('%d', n) end

local function ms_of(id) return tonumber(string.match(id, '^(%d+)')) end

local function pool_keys(i)
  local k = 3 + (i - 1) * NPK
  return KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
end

-- memo keeps what was parsed from the values this library last read or
-- wrote, per key or per argument string: a decision then reads a value it
-- has seen (Lua strings are interned: comparing them is one pointer) without
-- parsing it again. It only ever saves work: a value that differs in any
-- way is parsed afresh. Under EVAL it lives for one call.
local memo = {clock = {}, total = {}, conf = {}, days = {}, n = 0}

local function remember(kind, k, v)
  memo.n = memo.n + 1
  if memo.n > 10000 then memo = {clock = {}, total = {}, conf = {}, days = {}, n = 0} end
  memo[kind][k] = v
  return v
end

local function parse_clock(v, key)
  if not v then return nil end
  local m = key and memo.clock[key]
  if m and m.s == v then return m.last, m.seq, m.epoch, m.wait end
  local last, seq, epoch, wait = string.match(v, '^(%d+)%-(%d+):?(%w*):?(%d*)$')
  last, seq, wait = tonumber(last), tonumber(seq), tonumber(wait) or 0
  if key then remember('clock', key, {s = v, last = last, seq = seq, epoch = epoch, wait = wait}) end
  return last, seq, epoch, wait
end

-- clock_value: the clock carries the recovery's wait too, so that no single
-- key lost alone can end a wait (a lost clock is a loss of its own).
local function clock_value(ms, seq, epoch, wait)
  return string.format('%d-%d:%s:%d', ms, seq, epoch, wait or 0)
end

-- set_clock writes the clock and remembers what it wrote.
local function set_clock(ms, seq, epoch, wait, px)
  local v = clock_value(ms, seq, epoch, wait)
  redis.call('SET', KEYS[1], v, 'PX', px)
  remember('clock', KEYS[1], {s = v, last = ms, seq = seq, epoch = epoch, wait = wait or 0})
end

local function copy_total(m)
  return {cum = m.cum, wbase = m.wbase, wh = m.wh, dbase = m.dbase, ds = m.ds, head = m.head,
    touched = m.touched, fT = m.fT, fAt = m.fAt, present = true}
end

-- parse_total reads a pool's account; key (optional) lets it remember.
local function parse_total(v, key)
  if not v then
    return {cum = 0, wbase = 0, wh = 0, dbase = 0, ds = 0, head = 0, touched = 0, fT = -1, fAt = 0, present = false}
  end
  local m = key and memo.total[key]
  if m and m.s == v then return copy_total(m) end
  local a = {}
  for x in string.gmatch(v, '[^:]+') do a[#a + 1] = tonumber(x) end
  local t = {cum = a[1], wbase = a[2], wh = a[3], dbase = a[4], ds = a[5], head = a[6],
    touched = a[7], fT = a[8], fAt = a[9], present = true}
  if key then
    local c = copy_total(t)
    c.s = v
    remember('total', key, c)
  end
  return t
end

local function total_value(t)
  return string.format('%d:%d:%d:%d:%d:%d:%d:%d:%d', t.cum, t.wbase, t.wh, t.dbase, t.ds, t.head, t.touched, t.fT, t.fAt)
end

-- pool_conf reads "limit:reserve:window:day" into capacity and window.
local function pool_conf(s)
  local c = memo.conf[s]
  if c then return c end
  local limit, reserve, window = string.match(s, '^(%d+):(%d+):(%d+):')
  return remember('conf', s, {capacity = tonumber(limit) - tonumber(reserve), window = tonumber(window)})
end

-- day_starts reads "d1,d2,d3,d4" (or "0": no day).
local function day_starts(s)
  local d = memo.days[s]
  if d then return d end
  local a, b, c, e = string.match(s, '^(%d+),(%d+),(%d+),(%d+)$')
  if not a then return remember('days', s, {0, 0, 0, 0}) end
  return remember('days', s, {tonumber(a), tonumber(b), tonumber(c), tonumber(e)})
end

-- now reads TIME, never behind the last decision. A reading more than guard
-- ahead of the last decision that the caller's own clock does not confirm
-- is suspect: the decision is taken at the last time instead, so one odd
-- reading cannot throw the log away.
local function clock_now(last, worker_ms, guard)
  local now = time_ms()
  if last and now - last > guard and math.abs(now - worker_ms) > guard then
    return last, 1
  end
  return math.max(now, last or 0), 0
end

-- sum_range adds the units of the log's entries with ms in [from, to].
local function sum_range(log, from, to)
  if to < from then return 0, 0 end
  local sum, n = 0, 0
  for _, e in ipairs(redis.call('XRANGE', log, fmt(from), fmt(to))) do
    sum, n = sum + tonumber(e[2][2]), n + 1
  end
  return sum, n
end

-- day_of picks, among the caller's four day starts, the day holding now.
local function day_of(d, now)
  if d[1] == 0 then return 0, 0, true end
  for j = 1, 3 do
    if now >= d[j] and now < d[j + 1] then return d[j], d[j + 1], true end
  end
  return 0, 0, false
end

-- advance moves a pool's account to now: entries that left the window go to
-- wbase, a new day moves dbase, and entries out of both leave the log. It
-- reports a loss when the account counts entries the log no longer has.
local function advance(p, now)
  local t = p.t
  local horizon = now - p.window
  local lost = false
  if horizon > t.wh then
    if t.head > 0 and t.head <= horizon then
      local s = sum_range(p.log, t.wh + 1, horizon)
      t.wbase = t.wbase + s
      p.dirty = true
    end
    t.wh = horizon
  end
  if p.ds > 0 and p.ds ~= t.ds then
    if p.ds > t.ds then
      t.dbase = t.dbase + sum_range(p.log, t.ds, p.ds - 1)
    end
    t.ds = p.ds
    p.dirty = true
  end
  if t.wbase > t.cum or (p.ds > 0 and t.dbase > t.cum) then lost = true end
  local keep = t.wh
  if p.ds > 0 then keep = math.min(keep, t.ds - 1) end
  if t.head > 0 and t.head <= keep then
    redis.call('XTRIM', p.log, 'MINID', fmt(keep + 1))
    local first = redis.call('XRANGE', p.log, '-', '+', 'COUNT', 1)
    if #first == 0 then
      t.head = 0
      if t.cum ~= t.wbase then lost = true end
    else
      t.head = ms_of(first[1][1])
    end
    p.dirty = true
  end
  return lost
end

-- window_free is when the window has room for units: the time the entry
-- whose cumulative count reaches cum + units - capacity leaves it. Walking,
-- not oldest + window: with weighted costs the oldest entry may free too
-- little. The answer for one target never changes (entries keep their
-- place), so the last one is kept and a refused caller asking again reads
-- it without a walk. It returns nil when the log lacks the entries the
-- account counts (a loss).
local function window_free(p, units)
  local t = p.t
  local target = t.cum + units - p.capacity
  if target <= t.wbase then return 0 end
  if target == t.fT then return t.fAt end
  local sum, start = t.wbase, fmt(t.wh + 1)
  while true do
    local batch = redis.call('XRANGE', p.log, start, '+', 'COUNT', 128)
    if #batch == 0 then return nil end
    for _, e in ipairs(batch) do
      sum = sum + tonumber(e[2][2])
      if sum >= target then
        t.fT, t.fAt = target, ms_of(e[1]) + p.window
        p.dirty = true
        return t.fAt
      end
    end
    start = '(' .. batch[#batch][1]
  end
end

local function save(p, now, ttl)
  local t = p.t
  if now - t.touched >= margin / 2 or p.newlog then
    if t.head > 0 then redis.call('PEXPIRE', p.log, ttl) end
    redis.call('PEXPIRE', p.conf, ttl)
    t.touched = now
  end
  local v = total_value(t)
  redis.call('SET', p.total, v, 'PX', ttl)
  t.s = v -- t is not changed after save: it is remembered as it is
  remember('total', p.total, t)
end

-- load reads the per-pool arguments (units, conf, day starts from first
-- on) and keys, with one MGET for the clock and every pool's total, block,
-- conf and wait. Capacity and window come from the conf the caller sends.
local function load(first, fence)
  local npools = math.floor((#ARGV - first + 1) / 3)
  local mget = {KEYS[1]}
  local pools = {}
  for i = 1, npools do
    local k, a = 3 + (i - 1) * NPK, first + (i - 1) * 3
    local c = pool_conf(ARGV[a + 1])
    -- Every field a decision sets is in the constructor: a table that grows
    -- past its constructor is rebuilt.
    pools[i] = {log = KEYS[k + 1], total = KEYS[k + 2], block = KEYS[k + 3], conf = KEYS[k + 4], wait = KEYS[k + 5],
      units = tonumber(ARGV[a]), want = ARGV[a + 1], capacity = c.capacity, window = c.window,
      days = day_starts(ARGV[a + 2]), t = false, blocked = 0, stored = false, waiting = 0, ttl = 0,
      ds = 0, de = 0, used = 0, used_day = 0, free = 0, dirty = false, newlog = false}
    mget[4 * i - 2], mget[4 * i - 1], mget[4 * i], mget[4 * i + 1] = KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5]
  end
  if fence then mget[#mget + 1] = fence end
  local vals = redis.call('MGET', unpack(mget))
  for i, p in ipairs(pools) do
    local b = 1 + (i - 1) * 4
    p.t = parse_total(vals[b + 1], p.total)
    p.blocked = tonumber(vals[b + 2] or '0')
    p.stored = vals[b + 3]
    p.waiting = tonumber(vals[b + 4] or '0')
    p.ttl = math.max(p.window, 90000000) + margin -- a day of 25 hours, and more
  end
  return vals[1], pools, fence and vals[#mget]
end

-- Receipts: each spend carries the worker's token for it (a counter of
-- the limiter instance), and an admission writes "token id" into the
-- instance's ring of RING slots (slot token % RING, RW bytes each), so that
-- a worker that gave up waiting for an answer can learn later what became
-- of its call. The fence lists the tokens the worker gave up on and has
-- reconciled: a spend that reaches Redis after that is refused, so the
-- answer the reconciliation gave stays true.
local RING, RW = 32, 40

local function fenced(fence, token)
  return fence and string.find(',' .. fence .. ',', ',' .. token .. ',', 1, true) ~= nil
end

local function receipt(ring, token, id, ttl)
  local rec, slot = string.format('%12d%28s', token, id), token % RING
  if #rec ~= RW then return end -- cannot be: 12 digits of tokens, 28 of id
  local n = redis.call('SETRANGE', ring, slot * RW, rec)
  if n < RING * RW then
    -- A new ring: written whole in one SET, so that it takes its exact
    -- size (a string grown by SETRANGE keeps room to grow), with an expiry.
    local blank = string.rep(' ', RW)
    redis.call('SET', ring, string.rep(blank, slot) .. rec .. string.rep(blank, RING - slot - 1), 'PX', ttl)
  end
end

-- settle brings every pool to now and says whether any lost data; it fills
-- used, used_day and the day bounds.
local function settle(pools, now)
  local lost, bad_day = false, false
  for _, p in ipairs(pools) do
    local ok
    p.ds, p.de, ok = day_of(p.days, now)
    if not ok then bad_day = true end
    if p.blocked <= now then p.blocked = 0 end
    if p.waiting <= now then p.waiting = 0 end
    if not p.t.present and p.t.head == 0 and redis.call('EXISTS', p.log) == 1 then lost = true end
    if ok and advance(p, now) then lost = true end
    p.used = p.t.cum - p.t.wbase
    p.used_day = 0
    if p.ds > 0 then p.used_day = p.t.cum - p.t.dbase end
  end
  return lost, bad_day
end

local function spend()
  local known, known_seq, worker, register = ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7]
  local worker_ms, guard, token = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
  local ring = KEYS[#KEYS - 1]
  local clock, pools, fence = load(11, KEYS[#KEYS])
  local last, seq, epoch, wait = parse_clock(clock, KEYS[1])
  if not clock then return {-1, '', 0} end
  if known ~= '*' and epoch ~= known then return {-1, epoch, seq} end
  if seq < known_seq then return {-3, seq} end
  if fenced(fence, token) then return {-5, seq} end
  for i, p in ipairs(pools) do
    if p.stored and p.stored ~= p.want then return {-2, i, p.stored} end
  end
  local now, suspect = clock_now(last, worker_ms, guard)
  local lost, bad_day = settle(pools, now)
  if bad_day then return {-4, now} end
  if lost then return {-3, seq} end
  if wait <= now then wait = 0 end
  for _, p in ipairs(pools) do p.waiting = math.max(p.waiting, wait) end
  local allowed, retry = 1, 0
  for _, p in ipairs(pools) do
    local day_full = p.ds > 0 and p.used_day + p.units > p.capacity
    if p.blocked > 0 or p.waiting > 0 or day_full or p.used + p.units > p.capacity then allowed = 0 end
    p.free = window_free(p, p.units)
    if p.free == nil then return {-3, seq} end
    if day_full then p.free = math.max(p.free, p.de) end
    retry = math.max(retry, p.free, p.blocked, p.waiting)
  end
  if allowed == 1 then
    seq = seq + 1
    local id = string.format('%d-%d', now, seq)
    for _, p in ipairs(pools) do
      redis.call('XADD', p.log, id, 'u', p.units)
      p.t.cum = p.t.cum + p.units
      if p.t.head == 0 then p.t.head, p.newlog = now, true end
      p.used, p.dirty = p.used + p.units, true
      if p.ds > 0 then p.used_day = p.used_day + p.units end
      p.free = window_free(p, p.units) or 0
      if p.ds > 0 and p.used_day + p.units > p.capacity then p.free = math.max(p.free, p.de) end
      if not p.stored then redis.call('SET', p.conf, p.want, 'PX', p.ttl) end
    end
    retry = 0
    if register == '1' then
      redis.call('HSET', KEYS[2], worker, fmt(now))
      redis.call('PEXPIRE', KEYS[2], pools[1].ttl)
    end
  end
  local longest = 0
  for _, p in ipairs(pools) do
    longest = math.max(longest, p.ttl)
    if p.dirty then save(p, now, p.ttl) end
  end
  if allowed == 1 then
    set_clock(now, seq, epoch, wait, longest)
    receipt(ring, token, string.format('%d-%d', now, seq), longest)
  end
  local out = {allowed, now, seq, retry, suspect}
  for i, p in ipairs(pools) do
    local b = 5 * i
    out[b + 1], out[b + 2], out[b + 3], out[b + 4], out[b + 5] = p.used, p.used_day, p.free, p.blocked, p.waiting
  end
  return out
end


-- state reports without writing: the account is advanced in memory only.
local function state()
  local clock, pools = load(4)
  local last, seq, epoch, wait = parse_clock(clock)
  local now = math.max(time_ms(), last or 0)
  local out = {now, seq or 0, epoch or '', redis.call('HGET', KEYS[3], 'need') or '', ''}
  local done = {}
  for _, f in ipairs(redis.call('HKEYS', KEYS[3])) do
    local w = string.match(f, '^done:(.+)$')
    if w then table.insert(done, w) end
  end
  out[5] = table.concat(done, ',')
  for _, p in ipairs(pools) do
    p.ds, p.de = day_of(p.days, now)
    if p.blocked <= now then p.blocked = 0 end
    p.waiting = math.max(p.waiting, wait or 0)
    if p.waiting <= now then p.waiting = 0 end
    local tt = p.t
    local horizon = now - p.window
    local wbase, dbase = tt.wbase, tt.dbase
    if horizon > tt.wh then wbase = wbase + sum_range(p.log, tt.wh + 1, horizon) end
    if p.ds > tt.ds then dbase = dbase + sum_range(p.log, tt.ds, p.ds - 1) end
    tt.wbase, tt.wh = wbase, math.max(horizon, tt.wh)
    local used, used_day = tt.cum - wbase, 0
    if p.ds > 0 then used_day = tt.cum - dbase end
    local free = window_free(p, p.units) or 0
    if p.ds > 0 and used_day + p.units > p.capacity then free = math.max(free, p.de) end
    table.insert(out, used); table.insert(out, used_day); table.insert(out, free)
    table.insert(out, p.blocked); table.insert(out, p.waiting)
  end
  return out
end

-- block refuses the pool until the next start of its day after the
-- limiter's own now.
local function block()
  local clock = redis.call('GET', KEYS[1])
  local last = parse_clock(clock)
  local now = math.max(time_ms(), last or 0)
  local d = {tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])}
  local _, de, ok = day_of(d, now)
  if not ok or de == 0 then return redis.error_reply('window.lua: block: the limiter clock is over a day from the caller') end
  local log, total, blk = pool_keys(1)
  local until_ms = math.max(de, tonumber(redis.call('GET', blk) or '0'))
  redis.call('SET', blk, fmt(until_ms), 'PXAT', fmt(until_ms + margin))
  return until_ms
end

-- end_wait ends a recovery: the pools' waits, the clock's, the record.
local function end_wait()
  for i = 1, (#KEYS - 3) / NPK do
    local _, _, _, _, wait = pool_keys(i)
    redis.call('DEL', wait)
  end
  local clock = redis.call('GET', KEYS[1])
  if clock then
    local last, seq, epoch = parse_clock(clock)
    redis.call('SET', KEYS[1], clock_value(last, seq, epoch, 0), 'KEEPTTL')
  end
  redis.call('DEL', KEYS[3])
end

-- mark_done records that worker refilled its ledger, and ends the wait
-- when every worker the recovery needs has done so.
local function mark_done(worker, now)
  if redis.call('EXISTS', KEYS[3]) == 0 then return end
  redis.call('HSET', KEYS[3], 'done:' .. worker, fmt(now))
  local need = redis.call('HGET', KEYS[3], 'need')
  if not need then return end
  for w in string.gmatch(need, '[^,]+') do
    if redis.call('HEXISTS', KEYS[3], 'done:' .. w) == 0 then return end
  end
  end_wait()
end

-- rebuild rewrites a log from entries (sorted here) and its account from
-- scratch.
local function rebuild(log, total, entries, now, window, ds, ttl)
  table.sort(entries, function(x, y)
    if x.ms ~= y.ms then return x.ms < y.ms end
    return x.seq < y.seq
  end)
  redis.call('DEL', log)
  local horizon = now - window
  local tt = {cum = 0, wbase = 0, wh = horizon, dbase = 0, ds = ds, head = 0, touched = now, fT = -1, fAt = 0}
  local top = 0
  for _, e in ipairs(entries) do
    redis.call('XADD', log, e.id, 'u', e.u)
    tt.cum = tt.cum + e.u
    if e.ms <= horizon then tt.wbase = tt.cum end
    if ds > 0 and e.ms < ds then tt.dbase = tt.cum end
    if e.seq < 4503599627370496 then top = math.max(top, e.seq) end
  end
  if #entries > 0 then
    tt.head = entries[1].ms
    redis.call('PEXPIRE', log, ttl)
  end
  redis.call('SET', total, total_value(tt), 'PX', ttl)
  return top
end

local function entry(id, u)
  return {id = id, ms = ms_of(id), seq = tonumber(string.match(id, '%-(%d+)$')), u = u}
end

-- read_log lists a log's entries after keep.
local function read_log(log, keep)
  local have, entries = {}, {}
  for _, e in ipairs(redis.call('XRANGE', log, fmt(keep + 1), '+')) do
    have[e[1]] = true
    table.insert(entries, entry(e[1], tonumber(e[2][2])))
  end
  return have, entries
end

-- refill merges ledger calls back into the logs and rebuilds each account
-- from scratch. Streams only take increasing ids, so a log that gets an
-- older id is rewritten in order. Ids already present are skipped:
-- refilling twice counts once.
local function refill()
  local worker = ARGV[4]
  local clock = redis.call('GET', KEYS[1])
  local last, seq, epoch, wait = parse_clock(clock)
  local now = math.max(time_ms(), last or 0)
  seq = seq or 0
  local added, a, i = {}, 5, 0
  local newest, mine = 0, 0 -- the newest id put back; this worker's newest call
  local longest = 90000000  -- what the register must remember: a 25-hour day, or a longer window
  while a <= #ARGV do
    i = i + 1
    local log, total, blk = pool_keys(i)
    local capacity, window = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
    local d = {tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])}
    local block_until, n = tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])
    longest = math.max(longest, window)
    local ds = day_of(d, now)
    local horizon = now - window
    local keep = horizon
    if ds > 0 then keep = math.min(horizon, ds - 1) end
    local ttl = math.max(window, 90000000) + margin
    if block_until > now then
      local cur = tonumber(redis.call('GET', blk) or '0')
      if block_until > cur then redis.call('SET', blk, fmt(block_until), 'PXAT', fmt(block_until + margin)) end
    end
    local have, entries = read_log(log, keep)
    local fresh = redis.call('EXISTS', total) == 0 and redis.call('EXISTS', log) == 1
    for j = 0, n - 1 do
      local id, u = ARGV[a + 8 + 2 * j], tonumber(ARGV[a + 9 + 2 * j])
      local ms = ms_of(id)
      if ms > keep then mine = math.max(mine, ms) end
      if ms > keep and not have[id] then
        have[id], added[id], fresh = true, true, true
        newest = math.max(newest, ms)
        table.insert(entries, entry(id, u))
      end
    end
    if fresh then
      seq = math.max(seq, rebuild(log, total, entries, now, window, ds, ttl))
    end
    a = a + 8 + 2 * n
  end
  local count = 0
  for _ in pairs(added) do count = count + 1 end
  if clock and count > 0 then
    -- Ids put back may be ahead of TIME (a worker's clock ahead): the
    -- clock moves up to them, so that every later id is above them.
    redis.call('SET', KEYS[1], clock_value(math.max(last, newest + 1), seq, epoch, wait), 'KEEPTTL')
  end
  -- A worker that refilled calls of the window is in the register again:
  -- after a loss the register is gone or stale, and without this an idle
  -- worker's calls would be forgotten at the next loss.
  if mine > 0 and worker ~= 'restore' then
    local cur = tonumber(redis.call('HGET', KEYS[2], worker) or '0')
    if mine > cur then redis.call('HSET', KEYS[2], worker, fmt(mine)) end
    redis.call('PEXPIRE', KEYS[2], longest + margin)
  end
  mark_done(worker, now)
  return count
end

-- adopt names the keys' generation when they have none yet (Redis is new,
-- or the keys expired while idle) and returns the one in force.
local function adopt()
  local clock = redis.call('GET', KEYS[1])
  local last, seq, epoch = parse_clock(clock)
  if clock then return epoch end
  local now = time_ms()
  redis.call('SET', KEYS[1], clock_value(now, tonumber(ARGV[6]), ARGV[4], 0), 'PX', tonumber(ARGV[5]))
  return ARGV[4]
end

-- lost starts a recovery: a new generation (so every worker notices), the
-- counter never below what any worker saw, and the pools wait until their
-- window and day have passed or every worker that spent has refilled.
local function lost()
  local epoch, known_seq, need, ttl = ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
  local clock = redis.call('GET', KEYS[1])
  local last, seq, _, wait = parse_clock(clock)
  local now = math.max(time_ms(), last or 0)
  wait = wait or 0
  for i = 1, (#KEYS - 3) / NPK do
    local log, total, _, _, pwait = pool_keys(i)
    local a = 8 + (i - 1) * 5
    local window = tonumber(ARGV[a])
    local ds, de = day_of({tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])}, now)
    local until_ms = math.max(now + window, de)
    wait = math.max(wait, until_ms)
    local cur = tonumber(redis.call('GET', pwait) or '0')
    if until_ms > cur then redis.call('SET', pwait, fmt(until_ms), 'PXAT', fmt(until_ms + margin)) end
    local keep = now - window
    if ds > 0 then keep = math.min(keep, ds - 1) end
    local _, entries = read_log(log, keep)
    rebuild(log, total, entries, now, window, ds, math.max(window, 90000000) + margin)
  end
  redis.call('SET', KEYS[1], clock_value(now, math.max(seq or 0, known_seq), epoch, wait), 'PX', ttl)
  if redis.call('HEXISTS', KEYS[3], 'since') == 0 then redis.call('HSET', KEYS[3], 'since', fmt(now)) end
  if need ~= '' then
    local set, list = {}, {}
    for w in string.gmatch((redis.call('HGET', KEYS[3], 'need') or '') .. ',' .. need, '[^,]+') do
      if not set[w] then set[w] = true; table.insert(list, w) end
    end
    redis.call('HSET', KEYS[3], 'need', table.concat(list, ','))
  end
  redis.call('PEXPIRE', KEYS[3], ttl)
  return epoch
end

-- refund takes back an admitted call that never reached the upstream:
-- its entry leaves the log and its units the account. The last retry time
-- computed is forgotten, since cumulative targets moved.
local function refund()
  local id, n = ARGV[4], 0
  for i = 1, (#KEYS - 3) / NPK do
    local log, total = pool_keys(i)
    local u = tonumber(ARGV[4 + i])
    if redis.call('XDEL', log, id) == 1 then
      local t = parse_total(redis.call('GET', total))
      if t.present then
        local ms = ms_of(id)
        t.cum = t.cum - u
        if ms <= t.wh then t.wbase = t.wbase - u end
        if t.ds > 0 and ms < t.ds then t.dbase = t.dbase - u end
        t.fT, t.fAt = -1, 0
        redis.call('SET', total, total_value(t), 'KEEPTTL')
      end
      n = n + 1
    end
  end
  return n
end

-- reconcile answers, for each token a worker gave up on, the id Redis
-- admitted it under, '' when it was never admitted, or '?' when the ring
-- has since been written over by later calls and cannot tell. The tokens
-- join the fence first, in the same atomic step: a spend that is still on
-- its way is refused when it arrives, so '' stays true.
-- KEYS: ring, fence; ARGV[4] the fence's ttl, then the tokens.
local function reconcile()
  local ring, fence, ttl = KEYS[1], KEYS[2], tonumber(ARGV[4])
  local cur = redis.call('GET', fence)
  local list = {}
  if cur then list[1] = cur end
  local out = {}
  for j = 5, #ARGV do
    local token = tonumber(ARGV[j])
    if not fenced(cur, token) then list[#list + 1] = ARGV[j] end
    local r = redis.call('GETRANGE', ring, (token % RING) * RW, (token % RING) * RW + RW - 1)
    local have, id = string.match(r, '^%s*(%d+)%s+(%S+)$')
    have = tonumber(have)
    if have == token then
      out[#out + 1] = id
    elseif have and have > token then
      out[#out + 1] = '?'
    else
      out[#out + 1] = ''
    end
  end
  redis.call('SET', fence, table.concat(list, ','), 'PX', ttl)
  return out
end

local function release()
  end_wait()
  return 1
end

local function conf()
  local out = {}
  for i = 1, (#KEYS - 3) / NPK do
    local _, _, _, c = pool_keys(i)
    table.insert(out, redis.call('GET', c) or '')
  end
  return out
end

local function apply()
  local ttl = tonumber(ARGV[4])
  for i = 1, (#KEYS - 3) / NPK do
    local _, _, _, c = pool_keys(i)
    redis.call('SET', c, ARGV[4 + i], 'PX', ttl)
  end
  return 1
end

-- register and the register copy: a worker that heartbeats renews its
-- entry and reads the whole register (entries idle past ttl are dropped).
local function heartbeat()
  local worker, ttl = ARGV[4], tonumber(ARGV[5])
  local now = time_ms()
  local clock = redis.call('GET', KEYS[1])
  local _, seq, epoch = parse_clock(clock)
  local reg = redis.call('HGETALL', KEYS[2])
  local out = {now, seq or 0, epoch or ''}
  for j = 1, #reg, 2 do
    if now - tonumber(reg[j + 1]) > ttl then
      redis.call('HDEL', KEYS[2], reg[j])
    else
      table.insert(out, reg[j]); table.insert(out, reg[j + 1])
    end
  end
  if ARGV[6] == '1' then
    redis.call('HSET', KEYS[2], worker, fmt(now))
    table.insert(out, worker); table.insert(out, fmt(now))
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  return out
end

local modes = {
  spend = spend, state = state, block = block, refill = refill, adopt = adopt, lost = lost,
  release = release, refund = refund, conf = conf, apply = apply, heartbeat = heartbeat,
  reconcile = reconcile,
}

-- main runs one call: ARGV[1] names the mode.
local function main(keys, args)
  KEYS, ARGV = keys, args
  mode, margin, offset = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
  local f = modes[mode]
  if not f then return redis.error_reply('window.lua: unknown mode ' .. tostring(mode)) end
  return f()
end
