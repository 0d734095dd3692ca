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
-- Everything but the logs lives in one string, the state, so that a
-- decision reads one key and writes one key besides its log entry:
--   "<ms>-<seq>:<epoch>:<wait>" the last decision time (the clock never
--       goes back), the call counter, the keys' generation ('' before one
--       is adopted), and until when a recovery holds every pool (0: none)
--   then per pool RS name US "cum:wbase:wh:dbase:ds:head:touched:fT:fAt:
--       block:wait:conf" (RS, US: the ASCII record and unit separators,
--       which YAML names cannot hold; fT/fAt: the last retry time computed,
--       for cumulative target fT; block: ms until which the upstream says
--       the pool is spent; wait: ms until which a recovery holds it; conf:
--       "limit:reserve:window:day" as every worker must see it, '' until
--       the pool's first call)
--
-- KEYS: state, reg, recover, then one log per pool, in the order of the
-- pools' arguments; but spend, which is every decision and sends what it
-- needs only, takes state, one log per pool, the instance's receipts ring
-- and fence, and reg when it registers.
--   reg      hash worker -> ms of its last registration (the register)
--   recover  hash of the recovery after a loss: since, need (workers that
--            must refill, comma separated; absent until a worker vouches),
--            done:<worker> -> ms
--
-- ARGV[1] mode, ARGV[2] how long idle keys outlive what they guard (ms),
-- ARGV[3] an offset added to TIME (0 but in tests), then by mode; but
-- spend, the one mode of every decision, packs what changes rarely into
-- its ARGV[2], the profile, so as to send six arguments, not thirteen:
--   spend   profile, known seq, worker (when it registers, else ''), worker
--           ms, token; the profile is margin, offset, epoch, guard ms, then
--           per pool: units, conf (capacity and window are read from it),
--           "d1,d2,d3,d4" day starts ("0": none), separated by RS
--           -> {1|0, now, seq, retry, suspect, per pool: used, used_day,
--               free_at, blocked, wait}
--           or {2, now, seq, used, used_day}  one pool, admitted, and all
--               else 0 (free_at, blocked, wait, retry, suspect): the short
--               reply of most decisions
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
--   migrate (KEYS as above, then the previous layout's keys) ttl -> the epoch

-- The file is a library: it only defines functions, and main runs one
-- call. Go loads it once as a Redis Function (FUNCTION LOAD, then FCALL),
-- so that none of this is rebuilt per call; or, where functions are not to
-- be had, wraps it for EVALSHA. KEYS and ARGV are the call's, set by main.
local KEYS, ARGV
local mode, margin, offset -- offset: 0 but in tests, which move the clock
local RS, US = '\30', '\31'
local DAY25 = 90000000 -- a day of 25 hours: what keys outlive at least

local function time_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + offset
end

local function fmt(n) return string.format('%d', n) end

local function ms_of(id) return tonumber(string.match(id, '^(%d+)')) end

-- memo keeps what was parsed from the strings this library last read or
-- wrote (states, confs, day starts), keyed by the string itself: Lua
-- strings are interned, so a decision that reads the state the last one
-- wrote finds it parsed, with one table lookup. A parsed state is never
-- changed (a decision works on copies of what it changes), so a string
-- always maps to what parsing it would give. It only ever saves work.
-- Beside the parsed states it keeps refusals (keep_refusal) and hot
-- records (hot_record), each for the state string it was made on, or that
-- the admission made on it wrote (hot_admits moves the record along).
local memo = {state = {}, refused = {}, hot = {}, conf = {}, days = {}, name = {}, prof = {}, n = 0}

local function remember(kind, k, v)
  memo.n = memo.n + 1
  if memo.n > 256 then memo = {state = {}, refused = {}, hot = {}, conf = {}, days = {}, name = {}, prof = {}, n = 0} end
  memo[kind][k] = v
  return v
end

-- pool_conf reads "limit:reserve:window:day" into capacity and window.
local function pool_conf(s)
  local c = memo.conf[s]
  if c then return c end
  local limit, reserve, window = string.match(s, '^(%d+):(%d+):(%d+):')
  if not limit then return remember('conf', s, {capacity = 0, window = 0}) end
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

-- profile reads a spend's profile (see the top of the file).
local function profile(s)
  local pr = memo.prof[s]
  if pr then return pr end
  local f = {}
  for x in string.gmatch(s .. RS, '([^' .. RS .. ']*)' .. RS) do f[#f + 1] = x end
  pr = {margin = tonumber(f[1]), offset = tonumber(f[2]), epoch = f[3], guard = tonumber(f[4]), pools = {}}
  for i = 5, #f - 2, 3 do
    pr.pools[#pr.pools + 1] = {units = f[i], conf = f[i + 1], days = f[i + 2]}
  end
  return remember('prof', s, pr)
end

-- pool_name is the pool a log key is for: what follows ":log:".
local function pool_name(log)
  local n = memo.name[log]
  if n then return n end
  return remember('name', log, string.match(log, ':log:(.*)$'))
end

-- An account: one pool's part of the state.
local function zero_account()
  return {cum = 0, wbase = 0, wh = 0, dbase = 0, ds = 0, head = 0, touched = 0, fT = -1, fAt = 0,
    block = 0, wait = 0, conf = ''}
end

local function copy_account(a)
  return {cum = a.cum, wbase = a.wbase, wh = a.wh, dbase = a.dbase, ds = a.ds, head = a.head,
    touched = a.touched, fT = a.fT, fAt = a.fAt, block = a.block, wait = a.wait, conf = a.conf}
end

local function parse_account(s)
  local cum, wbase, wh, dbase, ds, head, touched, fT, fAt, block, wait, conf = string.match(s,
    '^(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(%-?%d+):(.*)$')
  if not cum then return nil end
  return {cum = tonumber(cum), wbase = tonumber(wbase), wh = tonumber(wh), dbase = tonumber(dbase),
    ds = tonumber(ds), head = tonumber(head), touched = tonumber(touched), fT = tonumber(fT),
    fAt = tonumber(fAt), block = tonumber(block), wait = tonumber(wait), conf = conf}
end

local function account_value(a)
  return string.format('%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:%d:', a.cum, a.wbase, a.wh, a.dbase, a.ds, a.head,
    a.touched, a.fT, a.fAt, a.block, a.wait) .. a.conf
end

-- parse_state reads the state (nil when the key is missing). A parsed
-- state: last, seq, epoch, wait; names, the pools in order; raw, each
-- pool's account string; acct, each pool's account, parsed. An account
-- that cannot be parsed is left out, as if lost.
local function parse_state(v)
  if not v then return nil end
  local st = memo.state[v]
  if st then return st end
  local last, seq, epoch, wait = string.match(v, '^(%d+)%-(%d+):(%w*):(%d+)')
  st = {last = tonumber(last) or 0, seq = tonumber(seq) or 0, epoch = epoch or '', wait = tonumber(wait) or 0,
    names = {}, raw = {}, acct = {}}
  for name, s in string.gmatch(v, RS .. '([^' .. RS .. US .. ']*)' .. US .. '([^' .. RS .. ']*)') do
    local a = parse_account(s)
    if a then
      st.names[#st.names + 1] = name
      st.raw[name], st.acct[name] = s, a
    end
  end
  return remember('state', v, st)
end

-- draft is a state to change: the header is copied, accounts are copied
-- when first asked for (account), the others keep their strings.
local function draft(st)
  if not st then
    return {last = 0, seq = 0, epoch = '', wait = 0, names = {}, raw = {}, acct = {}, mine = {}, present = false}
  end
  return {last = st.last, seq = st.seq, epoch = st.epoch, wait = st.wait, names = st.names, raw = st.raw,
    acct = st.acct, mine = {}, present = true, shared = true}
end

-- add_name lists a new pool in the draft (its names are copied first when
-- they are still the parsed state's).
local function add_name(d, name)
  if d.shared then
    local names = {}
    for i, n in ipairs(d.names) do names[i] = n end
    d.names, d.shared = names, false
  end
  d.names[#d.names + 1] = name
end

-- account returns the draft's own copy of a pool's account (a new one when
-- the state has none).
local function account(d, name)
  local a = d.mine[name]
  if a then return a end
  local old = d.acct[name]
  if old then
    a = copy_account(old)
  else
    a = zero_account()
    add_name(d, name)
  end
  d.mine[name] = a
  return a
end

-- ttl: how long the state must outlive its last write: a 25-hour day, or
-- the longest window of its pools, and the margin.
local function state_ttl(d)
  local w = DAY25
  for j = 1, #d.names do
    local n = d.names[j]
    local a = d.mine[n] or d.acct[n]
    if a.conf ~= '' then w = math.max(w, pool_conf(a.conf).window) end
  end
  return w + margin
end

-- write stores a draft (with PX ttl when given, or when the key is new;
-- its expiry is kept otherwise) and remembers it parsed.
local function write(d, ttl)
  local v = string.format('%d-%d:%s:%d', d.last, d.seq, d.epoch, d.wait)
  local st = {last = d.last, seq = d.seq, epoch = d.epoch, wait = d.wait, names = d.names, raw = {}, acct = {}}
  for j = 1, #d.names do
    local n = d.names[j]
    local a, s = d.mine[n], nil
    if a then s = account_value(a) else a, s = d.acct[n], d.raw[n] end
    v = v .. RS .. n .. US .. s
    st.raw[n], st.acct[n] = s, a
  end
  if ttl or not d.present then
    redis.call('SET', KEYS[1], v, 'PX', ttl or state_ttl(d))
  else
    redis.call('SET', KEYS[1], v, 'KEEPTTL')
  end
  d.present = true
  remember('state', v, st)
  return v
end

-- now reads TIME, never behind the last decision. A reading more than guard
-- ahead of the last decision that the caller's own clock does not confirm
-- is suspect: the decision is taken at the last time instead, so one odd
-- reading cannot throw the log away.
local function clock_now(last, worker_ms, guard)
  local now = time_ms()
  if last > 0 and now - last > guard and math.abs(now - worker_ms) > guard then
    return last, 1
  end
  return math.max(now, last), 0
end

-- sum_range adds the units of the log's entries with ms in [from, to].
local function sum_range(log, from, to)
  if to < from then return 0 end
  local sum = 0
  for _, e in ipairs(redis.call('XRANGE', log, fmt(from), fmt(to))) do
    sum = sum + tonumber(e[2][2])
  end
  return sum
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
-- expired_idle says whether a pool's log expired while the pool was idle
-- (calls of other pools kept the state): its expiry was renewed last at
-- touched, for longer than the window and the day, and no entry is newer
-- than touched, so every entry it held was out of both. Not a loss: the
-- account is to be emptied as the log was.
local function expired_idle(p, now)
  local t = p.t
  return t.head > 0 and now - t.touched >= math.max(p.window, DAY25) + margin and redis.call('EXISTS', p.log) == 0
end

local function advance(p, now)
  local t = p.t
  local horizon = now - p.window
  local lost = false
  if expired_idle(p, now) then
    t.wbase, t.dbase, t.head, t.wh = t.cum, t.cum, 0, math.max(t.wh, horizon)
    p.dirty = true
  end
  if horizon > t.wh then
    if t.head > 0 and t.head <= horizon then
      t.wbase = t.wbase + sum_range(p.log, t.wh + 1, horizon)
      p.dirty = true
    end
    t.wh = horizon
  end
  if p.day > 0 and p.day ~= t.ds then
    if p.day > t.ds then
      t.dbase = t.dbase + sum_range(p.log, t.ds, p.day - 1)
    end
    t.ds = p.day
    p.dirty = true
  end
  if t.wbase > t.cum or (p.day > 0 and t.dbase > t.cum) then lost = true end
  local keep = t.wh
  if p.day > 0 then keep = math.min(keep, t.ds - 1) end
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

-- pools reads the caller's pools (specs: units, conf and day starts, as
-- strings) against the state: one table per pool, its account a copy in
-- the draft d. Capacity and window come from the conf the caller sends.
local function pools_of(d, specs, k0)
  local out = {}
  for i = 1, #specs do
    local sp, log = specs[i], KEYS[k0 + i]
    local want, name = sp.conf, pool_name(log)
    local c = pool_conf(want)
    local o = d.acct[name]
    if not o then
      o = zero_account()
      add_name(d, name)
    end
    -- One table holds the pool's account (a copy: p.t is p) and the call's
    -- side of it. Every field a decision sets is in the constructor: a
    -- table that grows past its constructor is rebuilt.
    local p = {cum = o.cum, wbase = o.wbase, wh = o.wh, dbase = o.dbase, ds = o.ds, head = o.head,
      touched = o.touched, fT = o.fT, fAt = o.fAt, block = o.block, wait = o.wait, conf = o.conf,
      t = false, log = log, had = o.touched > 0, units = tonumber(sp.units), ustr = sp.units, want = want,
      capacity = c.capacity, window = c.window, days = day_starts(sp.days), blocked = o.block,
      waiting = o.wait, day = 0, de = 0, used = 0, used_day = 0, free = 0, dirty = false, newlog = false}
    p.t = p
    d.mine[name] = p
    out[i] = p
  end
  return out
end

-- Receipts: each spend carries the worker's token for it (a counter of
-- the limiter instance), and an admission writes "token id" into the
-- instance's ring of RING slots (slot token % RING, RW bytes each), so that
-- a worker that gave up waiting for an answer can learn later what became
-- of its call. The fence lists the tokens the worker gave up on and has
-- reconciled: a spend that reaches Redis after that is refused, so the
-- answer the reconciliation gave stays true.
local RING, RW = 32, 40
local BLANK = '                                        ' -- RW spaces (the
-- string library is not to be had while a Function library loads)

local function fenced(fence, token)
  return fence and string.find(',' .. fence .. ',', ',' .. token .. ',', 1, true) ~= nil
end

-- receipt writes an admission's receipt; a new ring expires with the
-- state (ttl, or the draft d's).
local function receipt(ring, tok, token, id, d, ttl)
  local rec = tok .. ' ' .. id
  if #rec > RW then return end -- cannot be: tokens and ids are far shorter
  rec = rec .. string.sub(BLANK, #rec + 1)
  local slot = token % RING
  local n = redis.call('SETRANGE', ring, slot * RW, rec)
  if n < RING * RW or (slot == RING - 1 and redis.call('PTTL', ring) == -1) then
    -- A new ring: written whole in one SET, so that it takes its exact
    -- size (a string grown by SETRANGE keeps room to grow), with an expiry.
    -- One begun at its last slot is as long as a full ring: its missing
    -- expiry tells it.
    redis.call('SET', ring, string.rep(BLANK, slot) .. rec .. string.rep(BLANK, RING - slot - 1), 'PX', ttl or state_ttl(d))
  end
end

-- settle brings every pool to now and says whether any lost data; it fills
-- used, used_day and the day bounds.
local function settle(ps, now)
  local lost, bad_day = false, false
  for j = 1, #ps do
    local p = ps[j]
    local ok
    p.day, p.de, ok = day_of(p.days, now)
    if not ok then bad_day = true end
    if p.blocked <= now then p.blocked = 0 end
    if p.waiting <= now then p.waiting = 0 end
    if not p.had and redis.call('EXISTS', p.log) == 1 then lost = true end
    if ok and advance(p, now) then lost = true end
    p.used = p.t.cum - p.t.wbase
    p.used_day = 0
    if p.day > 0 then p.used_day = p.t.cum - p.t.dbase end
  end
  return lost, bad_day
end

local function reply(allowed, now, seq, retry, suspect, ps)
  local p = ps[1]
  if allowed == 1 and #ps == 1 and suspect == 0 and p.free == 0 and p.blocked == 0 and p.waiting == 0 then
    return {2, now, seq, p.used, p.used_day}
  end
  local out = {allowed, now, seq, retry, suspect}
  for i = 1, #ps do
    local p = ps[i]
    local b = 5 * i
    out[b + 1], out[b + 2], out[b + 3], out[b + 4], out[b + 5] = p.used, p.used_day, p.free, p.blocked, p.waiting
  end
  return out
end

-- keep_refusal remembers a one-pool refusal for the state it was made on.
-- On a saturated pool every caller asks the same question of the same
-- state, and the answer cannot change until the first entry in the window
-- leaves it, or the day, a block or a wait ends: until then the question is
-- answered from memory, without the account's walk. Only refusals are
-- kept: an answer kept too long could refuse a call, never admit one.
local function keep_refusal(v, p, now, seq, retry)
  local upto = math.huge
  local first = redis.call('XRANGE', p.log, fmt(p.t.wh + 1), '+', 'COUNT', 1)
  if #first > 0 then upto = ms_of(first[1][1]) + p.window end
  if p.day > 0 then upto = math.min(upto, p.de) end
  if p.blocked > 0 then upto = math.min(upto, p.blocked) end
  if p.waiting > 0 then upto = math.min(upto, p.waiting) end
  remember('refused', v, {log = p.log, prof = ARGV[2], from = now, upto = upto,
    out = {0, now, seq, retry, 0, p.used, p.used_day, p.free, p.blocked, p.waiting}})
end

-- An admission on a hot state. Most decisions are one-pool admissions
-- with room to spare and nothing to advance or renew: all they change is
-- the pool's cum and wh, and the header. The one-pool admission that
-- writes a state string keeps beside it, in the memo, a hot record of what
-- the next such admission needs. Its shared part c holds what those
-- admissions leave as it is: the state string around cum and wh (mid,
-- from the header's epoch to cum; wmid, wbase between cum and wh; post,
-- the rest), the pool and its settings, and upto, when the account's next
-- renewal or its day's end comes due (the day itself is in the pool's
-- settings, which the caller's must match). The record itself holds the header
-- (last, seq, epoch), cum, wh, and fw, the time of the first entry after
-- wh, looked up when first needed: once that entry leaves the window the
-- account must advance. No trim of the log's head can come due before
-- then: an advance leaves the head after wh, or in the account's day.
-- An admission on a hot state writes what the full path would have,
-- without parsing the state or building the pool's table; any other
-- decision takes the full path.
local function hot_record(v, p, d, now, seq)
  local t = p.t
  local name = pool_name(p.log)
  local j = string.find(v, RS .. name .. US, 1, true) + #name + 2
  local k = string.match(v, '^%-?%d+:%-?%d+:%-?%d+()', j)
  local upto = t.touched + margin / 2
  if p.day > 0 then upto = math.min(upto, p.de) end
  local c = {log = p.log, conf = p.want,
    mid = string.format(':%s:%d', d.epoch, d.wait) .. string.sub(v, string.find(v, RS, 1, true), j - 1),
    wmid = ':' .. fmt(t.wbase) .. ':', post = string.sub(v, k), wbase = t.wbase, dbase = t.dbase,
    day = p.day, upto = upto, capacity = p.capacity, window = p.window, ttl = state_ttl(d)}
  remember('hot', v, {c = c, last = now, seq = seq, epoch = d.epoch, cum = t.cum, wh = t.wh, fw = false})
end

-- hot_admits admits a call on hot record h of state string old, or says
-- (nil) that the full path must decide: something is due, or the pool
-- would be left without room for another call like this one (the retry
-- time is then not 0).
local function hot_admits(h, old, now, token, q)
  local c = h.c
  if now >= c.upto or ARGV[4] ~= '' or c.log ~= KEYS[2] or c.conf ~= q.conf then return end
  local units = tonumber(q.units)
  local cum = h.cum + units
  if cum - c.wbase + units > c.capacity or (c.day > 0 and cum - c.dbase + units > c.capacity) then return end
  local fw = h.fw
  if not fw then
    -- A fact about the log as h's state left it, kept once looked up. The
    -- log always has an entry after wh (the admission that made the record
    -- added one), unless it was lost: the full path then decides.
    local first = redis.call('XRANGE', c.log, fmt(h.wh + 1), '+', 'COUNT', 1)
    if #first == 0 then return end
    fw = ms_of(first[1][1])
    h.fw = fw
  end
  if now >= fw + c.window then return end
  local seq = h.seq + 1
  local id = now .. '-' .. seq
  redis.call('XADD', c.log, id, 'u', q.units)
  local wh = math.max(h.wh, now - c.window)
  local v = id .. c.mid .. cum .. c.wmid .. wh .. c.post
  redis.call('SET', KEYS[1], v, 'KEEPTTL')
  -- The record moves to the new string: the old one loses it, so that,
  -- should it come back (a restore), the full path decides on it.
  memo.hot[old] = nil
  h.last, h.seq, h.cum, h.wh = now, seq, cum, wh
  memo.hot[v] = h
  receipt(KEYS[3], ARGV[6], token, id, nil, c.ttl)
  local used_day = 0
  if c.day > 0 then used_day = cum - c.dbase end
  return {2, now, seq, cum - c.wbase, used_day}
end

local function spend()
  local pr = profile(ARGV[2])
  margin, offset = pr.margin, pr.offset
  local known, known_seq, worker = pr.epoch, tonumber(ARGV[3]), ARGV[4]
  local worker_ms, guard, token = tonumber(ARGV[5]), pr.guard, tonumber(ARGV[6])
  local npools = #pr.pools
  local ring, fence = KEYS[npools + 2], KEYS[npools + 3]
  local vals = redis.call('MGET', KEYS[1], fence)
  local h = npools == 1 and vals[1] and memo.hot[vals[1]]
  local st = h or parse_state(vals[1])
  if not st or st.epoch == '' then return {-1, '', 0} end
  local seq = st.seq
  if known ~= '*' and st.epoch ~= known then return {-1, st.epoch, seq} end
  if seq < known_seq then return {-3, seq} end
  if fenced(vals[2], token) then return {-5, seq} end
  local now, suspect = clock_now(st.last, worker_ms, guard)
  if npools == 1 and suspect == 0 then
    local r = memo.refused[vals[1]]
    if r and r.log == KEYS[2] and r.prof == ARGV[2] and now >= r.from and now < r.upto then
      local out = r.out
      out[2] = now
      return out
    end
    if h then
      local out = hot_admits(h, vals[1], now, token, pr.pools[1])
      if out then return out end
    end
  end
  if h then st = parse_state(vals[1]) end
  local d = draft(st)
  local ps = pools_of(d, pr.pools, 1)
  for i = 1, #ps do
    local p = ps[i]
    if p.t.conf ~= '' and p.t.conf ~= p.want then return {-2, i, p.t.conf} end
  end
  local lost, bad_day = settle(ps, now)
  if bad_day then return {-4, now} end
  if lost then return {-3, seq} end
  local wait = st.wait
  if wait <= now then wait = 0 end
  local allowed, retry = 1, 0
  for j = 1, #ps do
    local p = ps[j]
    p.waiting = math.max(p.waiting, wait)
    local day_full = p.day > 0 and p.used_day + p.units > p.capacity
    if p.blocked > 0 or p.waiting > 0 or day_full or p.used + p.units > p.capacity then allowed = 0 end
    p.free = window_free(p, p.units)
    if p.free == nil then return {-3, seq} end
    if day_full then p.free = math.max(p.free, p.de) end
    retry = math.max(retry, p.free, p.blocked, p.waiting)
  end
  local dirty, id = false, nil
  if allowed == 1 then
    seq = seq + 1
    id = string.format('%d-%d', now, seq)
    for j = 1, #ps do
      local p = ps[j]
      local t = p.t
      redis.call('XADD', p.log, id, 'u', p.ustr)
      t.cum = t.cum + p.units
      if t.head == 0 then t.head, p.newlog = now, true end
      p.used, p.dirty = p.used + p.units, true
      if p.day > 0 then p.used_day = p.used_day + p.units end
      p.free = window_free(p, p.units) or 0
      if p.day > 0 and p.used_day + p.units > p.capacity then p.free = math.max(p.free, p.de) end
      if t.conf == '' then t.conf = p.want end
    end
    retry = 0
    d.last, d.seq = now, seq
    if worker ~= '' then
      local reg = KEYS[npools + 4]
      redis.call('HSET', reg, worker, fmt(now))
      redis.call('PEXPIRE', reg, math.max(ps[1].window, DAY25) + margin)
    end
    dirty = true
  end
  -- The expiries of the state and the logs are renewed every margin/2,
  -- not at every call: each key always outlives what it guards by at
  -- least half the margin.
  local ttl = nil
  for j = 1, #ps do
    local p = ps[j]
    local t = p.t
    if p.dirty and (now - t.touched >= margin / 2 or p.newlog) then
      ttl = state_ttl(d)
      if t.head > 0 then redis.call('PEXPIRE', p.log, ttl) end
      t.touched = now
    end
    dirty = dirty or p.dirty
  end
  local v = vals[1]
  if dirty then v = write(d, ttl) end
  if id then receipt(ring, ARGV[6], token, id, d) end
  if allowed == 0 and npools == 1 and suspect == 0 then keep_refusal(v, ps[1], now, seq, retry) end
  if id then hot_record(v, ps[1], d, now, seq) end
  return reply(allowed, now, seq, retry, suspect, ps)
end

-- recovery reads the recovery on record: who it needs, who is done.
local function recovery()
  local need = redis.call('HGET', KEYS[3], 'need') or ''
  local done = {}
  for _, f in ipairs(redis.call('HKEYS', KEYS[3])) do
    local w = string.match(f, '^done:(.+)$')
    if w then done[#done + 1] = w end
  end
  return need, table.concat(done, ',')
end

-- state reports without writing: the account is advanced in memory only.
local function state()
  local st = parse_state(redis.call('GET', KEYS[1]))
  local d = draft(st)
  local specs = {}
  for a = 4, #ARGV, 3 do specs[#specs + 1] = {units = ARGV[a], conf = ARGV[a + 1], days = ARGV[a + 2]} end
  local ps = pools_of(d, specs, 3)
  local now = math.max(time_ms(), d.last)
  local need, done = recovery()
  local out = {now, d.seq, d.epoch, need, done}
  for _, p in ipairs(ps) do
    p.day, p.de = day_of(p.days, now)
    if p.blocked <= now then p.blocked = 0 end
    p.waiting = math.max(p.waiting, d.wait)
    if p.waiting <= now then p.waiting = 0 end
    local tt = p.t
    local horizon = now - p.window
    if expired_idle(p, now) then
      tt.wbase, tt.dbase, tt.wh = tt.cum, tt.cum, math.max(tt.wh, horizon)
    end
    if horizon > tt.wh then
      tt.wbase = tt.wbase + sum_range(p.log, tt.wh + 1, horizon)
      tt.wh = horizon
    end
    if p.day > tt.ds then tt.dbase = tt.dbase + sum_range(p.log, tt.ds, p.day - 1) end
    local used, used_day = tt.cum - tt.wbase, 0
    if p.day > 0 then used_day = tt.cum - tt.dbase end
    local free = window_free(p, p.units) or 0
    if p.day > 0 and used_day + p.units > p.capacity then free = math.max(free, p.de) end
    out[#out + 1], out[#out + 2], out[#out + 3] = used, used_day, free
    out[#out + 1], out[#out + 2] = p.blocked, p.waiting
  end
  return out
end

-- block refuses the pool until the next start of its day after the
-- limiter's own now.
local function block()
  local d = draft(parse_state(redis.call('GET', KEYS[1])))
  local now = math.max(time_ms(), d.last)
  local days = {tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])}
  local _, de, ok = day_of(days, now)
  if not ok or de == 0 then return redis.error_reply('window.lua: block: the limiter clock is over a day from the caller') end
  local a = account(d, pool_name(KEYS[4]))
  a.block = math.max(de, a.block)
  write(d, math.max(state_ttl(d), a.block - now + margin))
  return a.block
end

-- end_wait ends a recovery: the pools' waits, the clock's, the record.
local function end_wait()
  local st = parse_state(redis.call('GET', KEYS[1]))
  if st then
    local d = draft(st)
    d.wait = 0
    for _, n in ipairs(st.names) do
      if st.acct[n].wait > 0 then account(d, n).wait = 0 end
    end
    write(d)
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

-- rebuild rewrites a log from entries (sorted here) and its account a from
-- scratch (its block, wait and conf stay). It returns the highest counter
-- among the entries.
local function rebuild(log, a, entries, now, window, ds, ttl)
  table.sort(entries, function(x, y)
    if x.ms ~= y.ms then return x.ms < y.ms end
    return x.seq < y.seq
  end)
  redis.call('DEL', log)
  local horizon = now - window
  a.cum, a.wbase, a.wh, a.dbase, a.ds, a.head, a.touched, a.fT, a.fAt = 0, 0, horizon, 0, ds, 0, now, -1, 0
  local top = 0
  for _, e in ipairs(entries) do
    redis.call('XADD', log, e.id, 'u', e.u)
    a.cum = a.cum + e.u
    if e.ms <= horizon then a.wbase = a.cum end
    if ds > 0 and e.ms < ds then a.dbase = a.cum end
    if e.seq < 4503599627370496 then top = math.max(top, e.seq) end
  end
  if #entries > 0 then
    -- Entries put back may be ahead of TIME (a worker's clock ahead):
    -- touched is never behind the newest, and the log lives as long past
    -- it, so that a log gone after touched + its lifetime held nothing of
    -- the window (see advance).
    local newest = entries[#entries].ms
    a.head, a.touched = entries[1].ms, math.max(now, newest)
    redis.call('PEXPIRE', log, ttl + a.touched - now)
  end
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
    entries[#entries + 1] = entry(e[1], tonumber(e[2][2]))
  end
  return have, entries
end

-- refill merges ledger calls back into the logs and rebuilds each account
-- from scratch. Streams only take increasing ids, so a log that gets an
-- older id is rewritten in order. Ids already present are skipped:
-- refilling twice counts once.
local function refill()
  local worker = ARGV[4]
  local st = parse_state(redis.call('GET', KEYS[1]))
  local d = draft(st)
  local now = math.max(time_ms(), d.last)
  local added, a, i = {}, 5, 0
  local newest, mine = 0, 0 -- the newest id put back; this worker's newest call
  local longest = DAY25     -- what the register must remember: a 25-hour day, or a longer window
  local changed = false
  while a <= #ARGV do
    i = i + 1
    local log = KEYS[3 + i]
    local name = pool_name(log)
    local window = tonumber(ARGV[a + 1])
    local days = {tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])}
    local block_until, n = tonumber(ARGV[a + 6]), tonumber(ARGV[a + 7])
    longest = math.max(longest, window)
    local ds = day_of(days, now)
    local horizon = now - window
    local keep = horizon
    if ds > 0 then keep = math.min(horizon, ds - 1) end
    local ttl = math.max(window, DAY25) + margin
    local have, entries = read_log(log, keep)
    local a0 = d.acct[name]
    local fresh = (a0 == nil or a0.touched == 0) and redis.call('EXISTS', log) == 1
    for j = 0, n - 1 do
      local id, u = ARGV[a + 8 + 2 * j], tonumber(ARGV[a + 9 + 2 * j])
      local ms = ms_of(id)
      if ms > keep then mine = math.max(mine, ms) end
      if ms > keep and not have[id] then
        have[id], added[id], fresh = true, true, true
        newest = math.max(newest, ms)
        entries[#entries + 1] = entry(id, u)
      end
    end
    if fresh or block_until > now then
      local acc = account(d, name)
      if fresh then d.seq = math.max(d.seq, rebuild(log, acc, entries, now, window, ds, ttl)) end
      if block_until > acc.block then acc.block = block_until end
      changed = true
    end
    a = a + 8 + 2 * n
  end
  local count = 0
  for _ in pairs(added) do count = count + 1 end
  if count > 0 then
    -- Ids put back may be ahead of TIME (a worker's clock ahead): the
    -- clock moves up to them, so that every later id is above them.
    d.last = math.max(d.last, newest + 1)
  end
  if changed then write(d, math.max(state_ttl(d), longest + margin)) end
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
  local st = parse_state(redis.call('GET', KEYS[1]))
  if st and st.epoch ~= '' then return st.epoch end
  local d = draft(st)
  d.last = math.max(time_ms(), d.last)
  d.seq, d.epoch = math.max(d.seq, tonumber(ARGV[6])), ARGV[4]
  -- A recovery on record whose state was lost still holds every pool
  -- until its end (or until every worker it needs has refilled).
  local u = tonumber(redis.call('HGET', KEYS[3], 'until') or '0')
  if u > d.last then d.wait = math.max(d.wait, u) end
  write(d, math.max(state_ttl(d), tonumber(ARGV[5]), d.wait - d.last + margin))
  return ARGV[4]
end

-- lost starts a recovery: a new generation (so every worker notices), the
-- counter never below what any worker saw, and the pools wait until their
-- window and day have passed or every worker that spent has refilled.
local function lost()
  local epoch, known_seq, need, ttl = ARGV[4], tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
  local d = draft(parse_state(redis.call('GET', KEYS[1])))
  local now = math.max(time_ms(), d.last)
  for i = 1, #KEYS - 3 do
    local log = KEYS[3 + i]
    local a = 8 + (i - 1) * 5
    local window = tonumber(ARGV[a])
    local ds, de = day_of({tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])}, now)
    local until_ms = math.max(now + window, de)
    d.wait = math.max(d.wait, until_ms)
    local acc = account(d, pool_name(log))
    acc.wait = math.max(acc.wait, until_ms)
    local keep = now - window
    if ds > 0 then keep = math.min(keep, ds - 1) end
    local _, entries = read_log(log, keep)
    rebuild(log, acc, entries, now, window, ds, math.max(window, DAY25) + margin)
  end
  d.last, d.seq, d.epoch = now, math.max(d.seq, known_seq), epoch
  write(d, math.max(state_ttl(d), ttl, d.wait - now + margin))
  if redis.call('HEXISTS', KEYS[3], 'since') == 0 then redis.call('HSET', KEYS[3], 'since', fmt(now)) end
  -- The wait's end is in the record too, so that losing the state alone
  -- cannot end it (adopt reads it back).
  local u = tonumber(redis.call('HGET', KEYS[3], 'until') or '0')
  if d.wait > u then redis.call('HSET', KEYS[3], 'until', fmt(d.wait)) end
  if need ~= '' then
    local set, list = {}, {}
    for w in string.gmatch((redis.call('HGET', KEYS[3], 'need') or '') .. ',' .. need, '[^,]+') do
      if not set[w] then set[w] = true; list[#list + 1] = w end
    end
    redis.call('HSET', KEYS[3], 'need', table.concat(list, ','))
  end
  redis.call('PEXPIRE', KEYS[3], math.max(ttl, d.wait - now + margin))
  return epoch
end

-- refund takes back an admitted call that never reached the upstream:
-- its entry leaves the log and its units the account. The last retry time
-- computed is forgotten, since cumulative targets moved.
local function refund()
  local id, n = ARGV[4], 0
  local st = parse_state(redis.call('GET', KEYS[1]))
  local d = draft(st)
  for i = 1, #KEYS - 3 do
    local log = KEYS[3 + i]
    local u = tonumber(ARGV[4 + i])
    if redis.call('XDEL', log, id) == 1 then
      local name = pool_name(log)
      if d.acct[name] then
        local a = account(d, name)
        local ms = ms_of(id)
        a.cum = a.cum - u
        if ms <= a.wh then a.wbase = a.wbase - u end
        if a.ds > 0 and ms < a.ds then a.dbase = a.dbase - u end
        a.fT, a.fAt = -1, 0
      end
      n = n + 1
    end
  end
  if st and n > 0 then write(d) end
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
    local have, id = string.match(r, '^%s*(%d+)%s+(%S+)%s*$')
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

-- migrate brings the keys of the layout before the state (a clock key, and
-- per pool a total, block, conf and wait key, beside the same logs) into
-- the state, with their generation and counter, so that upgrading the
-- workers is not a loss. KEYS: state, reg, recover, the logs, then the old
-- clock and each pool's old total, block, conf and wait; ARGV[4] the
-- state's ttl. It returns the generation in force ('' when there is
-- nothing to migrate).
local function migrate()
  local st = parse_state(redis.call('GET', KEYS[1]))
  if st and st.epoch ~= '' then return st.epoch end
  local n = (#KEYS - 4) / 5
  local old = KEYS[4 + n]
  local last, seq, epoch, wait = string.match(redis.call('GET', old) or '', '^(%d+)%-(%d+):(%w*):?(%d*)$')
  if not last or epoch == '' then return '' end
  -- A state without a generation may already be there (quota apply, a
  -- block, a refill after an outage wrote it): what it holds is kept, and
  -- the old keys fill in what it lacks.
  local d = draft(st)
  d.last, d.seq, d.epoch = math.max(d.last, tonumber(last)), math.max(d.seq, tonumber(seq)), epoch
  -- The old waits belong to a recovery: they hold only while its record
  -- does (a restore or the last refill may have ended it since), and then
  -- their end goes into the record, as lost writes it now.
  local recovering = redis.call('EXISTS', KEYS[3]) == 1
  if recovering then d.wait = math.max(d.wait, tonumber(wait) or 0) end
  for i = 1, n do
    local k = 4 + n + (i - 1) * 4
    local v = redis.call('MGET', KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4])
    local f = {}
    for x in string.gmatch(v[1] or '', '[^:]+') do f[#f + 1] = tonumber(x) end
    if #f == 9 or v[2] or v[3] or v[4] then
      local a = account(d, pool_name(KEYS[3 + i]))
      if #f == 9 and a.touched == 0 then
        a.cum, a.wbase, a.wh, a.dbase, a.ds, a.head, a.touched, a.fT, a.fAt = unpack(f)
      end
      a.block = math.max(a.block, tonumber(v[2] or '0'))
      if recovering then a.wait = math.max(a.wait, tonumber(v[4] or '0')) end
      if a.conf == '' then a.conf = v[3] or '' end
    end
    redis.call('DEL', KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4])
  end
  redis.call('DEL', old)
  if recovering and d.wait > tonumber(redis.call('HGET', KEYS[3], 'until') or '0') then
    redis.call('HSET', KEYS[3], 'until', fmt(d.wait))
  end
  write(d, math.max(state_ttl(d), tonumber(ARGV[4]), d.wait - d.last + margin))
  return epoch
end

local function conf()
  local st = parse_state(redis.call('GET', KEYS[1]))
  local out = {}
  for i = 1, #KEYS - 3 do
    local a = st and st.acct[pool_name(KEYS[3 + i])]
    out[i] = a and a.conf or ''
  end
  return out
end

local function apply()
  local ttl = tonumber(ARGV[4])
  local d = draft(parse_state(redis.call('GET', KEYS[1])))
  for i = 1, #KEYS - 3 do
    account(d, pool_name(KEYS[3 + i])).conf = ARGV[4 + i]
  end
  write(d, math.max(ttl, state_ttl(d)))
  return 1
end

-- register and the register copy: a worker that heartbeats renews its
-- entry and reads the whole register (entries idle past ttl are dropped).
local function heartbeat()
  local worker, ttl = ARGV[4], tonumber(ARGV[5])
  local now = time_ms()
  local st = parse_state(redis.call('GET', KEYS[1]))
  local reg = redis.call('HGETALL', KEYS[2])
  local out = {now, st and st.seq or 0, st and st.epoch or ''}
  for j = 1, #reg, 2 do
    if now - tonumber(reg[j + 1]) > ttl then
      redis.call('HDEL', KEYS[2], reg[j])
    else
      out[#out + 1], out[#out + 2] = reg[j], reg[j + 1]
    end
  end
  if ARGV[6] == '1' then
    redis.call('HSET', KEYS[2], worker, fmt(now))
    out[#out + 1], out[#out + 2] = worker, fmt(now)
    redis.call('PEXPIRE', KEYS[2], ttl)
  end
  return out
end

local modes = {
  spend = spend, state = state, block = block, refill = refill, adopt = adopt, lost = lost,
  release = release, refund = refund, conf = conf, apply = apply, heartbeat = heartbeat,
  reconcile = reconcile, migrate = migrate,
}

-- main runs one call: ARGV[1] names the mode.
local function main(keys, args)
  KEYS, ARGV = keys, args
  mode = ARGV[1]
  if mode ~= 'spend' then margin, offset = tonumber(ARGV[2]), tonumber(ARGV[3]) end
  local f = modes[mode]
  if not f then return redis.error_reply('window.lua: unknown mode ' .. tostring(mode)) end
  return f()
end
