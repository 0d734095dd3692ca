-- window.lua: the shared limiter's decisions, one mode per call (docs/explanation/quota.md, "Inside the
-- limiter", lists the keys, the state's fields and the promises; fence.lua settles unknown
-- outcomes). KEYS: state, conf, ledgers, receipts, fence, one log per pool of a.pools; ARGV:
-- the mode, its arguments (a).

local S, CONF, LEDGERS, RCPT, FENCE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local mode, a, modes = ARGV[1], cjson.decode(ARGV[2]), {}
-- an unmetered call written back takes a sequence from here up (ids.go), above every counter
local UNMETERED = 4503599627370496
-- the embedded limiter's ids take their sequence from here up (ids.go): not this counter's
local EMBEDDED = 2251799813685248
local function fmt(n) return string.format('%d', n) end
local function num(v) return tonumber(v or 0) or 0 end
local function expire(key) redis.call('PEXPIRE', key, a.ttl) end
local function whole(v, least) return type(v) == 'number' and v >= least and v % 1 == 0 end
local function after(v, now) v = num(v) return v > now and v or 0 end

local function id_parts(id)
  local ms, seq = string.match(id or '', '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function ms_of(id) return (id_parts(id)) end
local function id_less(x, y) -- by time, then counter
  local xm, xs = id_parts(x)
  local ym, ys = id_parts(y)
  return xm < ym or (xm == ym and xs < ys)
end
local function list_has(l, v)
  for _, x in ipairs(l) do if x == v then return true end end
  return false
end
local function state()
  local st, raw = {}, redis.call('HGETALL', S)
  for i = 1, #raw, 2 do st[raw[i]] = raw[i + 1] end
  return st
end
-- decode reads a JSON field; nil when it cannot be read.
local function decode(s)
  local ok, v = pcall(cjson.decode, s)
  if ok and type(v) == 'table' then return v end
end
-- P are the pools of this call, each with its log key.
local P = a.pools or {}
for i, p in ipairs(P) do p.key = KEYS[5 + i] end
-- corrupt state is a loss, never a gift (promise 9): the mode answers 'lost'; `lost` scrubs
local function corrupt(why) error({corrupt = why}) end
-- ledgers lists the ledgers hash as {name, e}, e nil when the entry cannot
-- be read; own_mark is this ledger's mark there, nil for none.
local function seen(raw)
  local e = decode(raw)
  if e and type(e.mark) == 'string' and e.mark:match('^%d+%-%d+$') and type(e.at) == 'number' then return e end
end
local function ledgers()
  local out, raw = {}, redis.call('HGETALL', LEDGERS)
  for i = 1, #raw, 2 do out[#out + 1] = {name = raw[i], e = seen(raw[i + 1])} end
  return out
end
local function own_mark() return (seen(redis.call('HGET', LEDGERS, a.ledger) or nil) or {}).mark end
-- register moves this ledger's mark to id; a spend (spent) also stamps, by pool, the last
-- time it spent there, which tells a worker how many others share the pool's window.
local function register(id, now, spent)
  local pools = (seen(redis.call('HGET', LEDGERS, a.ledger) or nil) or {}).pools
  if type(pools) ~= 'table' then pools = nil end
  if spent then
    pools = pools or {}
    for _, p in ipairs(P) do pools[p.name] = now end
  end
  redis.call('HSET', LEDGERS, a.ledger, cjson.encode({mark = id, at = now, where = a.where or '', pools = pools}))
  expire(LEDGERS)
end

local function fields(e)
  local f = {}
  for i = 1, #e[2], 2 do f[e[2][i]] = tonumber(e[2][i + 1]) end
  if not (whole(f.u, 1) and whole(f.c, f.u)) then corrupt('log entry ' .. e[1] .. ' holds units or a sum that cannot be') end
  return f
end
-- head is p's oldest entry and the running sum before it (nil: an empty log).
local function head(p)
  local e = redis.call('XRANGE', p.key, '-', '+', 'COUNT', 1)[1]
  if e then local f = fields(e) return e[1], f.c - f.u end
end
-- set_last writes the id p's log must end with (nil: an empty log), and the sum before its
-- head: entries trimmed from the head take their units out of every window edge before them.
local function set_last(p, id)
  if id then redis.call('HSET', S, p.name .. '.last', id) else redis.call('HDEL', S, p.name .. '.last') end
  local _, base = head(p)
  if base then redis.call('HSET', S, p.name .. '.base', fmt(base)) else redis.call('HDEL', S, p.name .. '.base') end
end

-- The hold (clock.go says why): decisions stamped from hold.from on count as decided when the
-- clock is next seen right (till; 0 while it still reads behind: now).
local hold = {from = 0, till = 0}
local function move_hold(st, raw, last)
  hold.from, hold.till = num(st.hold_from), num(st.hold_till)
  if raw < last then
    if hold.from == 0 or (hold.till > 0 and hold.till + a.span <= last) then hold.from = last end
    hold.till = 0
  elseif hold.from > 0 and hold.till == 0 then hold.till = raw
  elseif hold.from > 0 and hold.till + a.span <= raw then hold.from, hold.till = 0, 0 end
end
-- stamp is when an entry of time ms counts as decided, at now.
local function stamp(ms, now)
  if not (hold.from > 0 and ms >= hold.from and (hold.till == 0 or ms < hold.till)) then return ms end
  return hold.till > 0 and hold.till or now
end
local function keep_clock(now)
  redis.call('HSET', S, 'clock', fmt(now), 'hold_from', fmt(hold.from), 'hold_till', fmt(hold.till))
  expire(S)
end

-- edge is the newest time an entry may have and be out of p's window at now (stamp never
-- goes back: the window holds the entries after one time).
local function edge(p, now)
  local e = now - p.window
  return stamp(e, now) > e and hold.from - 1 or e
end
-- day_of picks, from the four day starts the worker sent, the day that holds now: {start,
-- next start}; nil for a pool without a day, false when now is outside them all.
local function day_of(days, now)
  if not days or #days == 0 then return nil end
  for i = 1, 3 do if now >= days[i] and now < days[i + 1] then return {days[i], days[i + 1]} end end
  return false
end
-- horizon is the newest time an entry may have and count in neither p's window nor its day:
-- a log keeps what is after it, and may lose the rest unseen (expired while idle).
local function horizon(p, now)
  local day = day_of(p.days, now)
  return day and math.min(edge(p, now), day[1] - 1) or edge(p, now)
end

-- One clock (promise 4): the server's TIME, never behind the last decision nor any log's
-- newest entry; a jump ahead by more than a.guard that the boot clock denies gives way to it.
local function clock(st)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + (a.offset or 0)
  local last, guarded, newest = num(st.clock), false, 0
  if st.clock and not tonumber(st.clock) then corrupt('the state clock cannot be read') end
  if (a.ref or 0) > 0 and last > 0 and now - last > a.guard and math.abs(now - a.up - a.ref) > a.guard then
    now, guarded = a.ref + a.up, true
  end
  for _, p in ipairs(P) do
    local top = redis.call('XREVRANGE', p.key, '+', '-', 'COUNT', 1)[1]
    p.top, p.cum = top and top[1], top and fields(top).c or 0
    if top then
      local ms, seq = id_parts(top[1])
      -- the next decision goes after an unmetered call's millisecond
      if seq >= UNMETERED then ms = ms + 1 end
      newest = math.max(newest, ms)
    end
  end
  if last - now > a.guard then
    local marks = ms_of(a.mark) or 0
    for _, l in ipairs(ledgers()) do if l.e then marks = math.max(marks, ms_of(l.e.mark)) end end
    if last - math.max(newest, marks) > a.guard then
      corrupt('the state clock is ahead of every entry and every ledger mark by more than the guard')
    end
  end
  last = math.max(last, newest)
  move_hold(st, now, last)
  return math.max(now, last), guarded
end

-- cum_at is the running sum up to and including ms: the sum before the first entry after ms
-- (a forward seek; XREVRANGE would read it all).
local function cum_at(p, ms)
  local e = redis.call('XRANGE', p.key, fmt(ms + 1), '+', 'COUNT', 1)[1]
  local f = e and fields(e)
  return f and f.c - f.u or p.cum
end

-- free_at is when p has room (zero: now): when the entry whose running sum reaches cum +
-- units - cap has left the window (looked for as docs/explanation/quota.md, "Inside the limiter", says), the next day when the day is
-- full, never before a block or a wait ends.
local function free_at(p, now)
  local t = 0
  if p.used + p.units > p.cap then
    local target, lo, hi = p.cum + p.units - p.cap, edge(p, now), now
    for _, e in ipairs(redis.call('XRANGE', p.key, fmt(lo + 1), '+', 'COUNT', 32)) do
      if fields(e).c >= target then lo, hi = ms_of(e[1]) - 1, ms_of(e[1]) break end
      lo = ms_of(e[1]) - 1 -- entries of the same millisecond may follow
    end
    while hi - lo > 1 do
      local mid = math.floor((lo + hi) / 2)
      if cum_at(p, mid) >= target then hi = mid else lo = mid end
    end
    t = stamp(hi, now) + p.window
  end
  if p.day and p.used_day + p.units > p.cap then t = math.max(t, p.day[2]) end
  return math.max(t, p.block, p.wait)
end

-- view fills what a decision needs of p at now: the units in its window and day, its block,
-- its wait, when it has room (a day out of reach, false, counts as none; a spend refuses it).
local function view(p, st, now)
  p.used = p.cum - cum_at(p, edge(p, now))
  p.day = day_of(p.days, now)
  p.used_day = p.day and (p.cum - cum_at(p, p.day[1] - 1)) or 0
  if p.used < 0 or p.used_day < 0 then corrupt('the running sums of pool ' .. p.name .. ' go down') end
  p.block, p.wait = after(st[p.name .. '.block'], now), after(st[p.name .. '.wait'], now)
  p.free = free_at(p, now)
  return {used = p.used, used_day = p.used_day, free = p.free, block = p.block, wait = p.wait}
end

-- active: a recovery lists ledgers and some pool's wait has not passed (lists outlive waits).
local function active(st, now)
  if not st.need then return false end
  for k, v in pairs(st) do if k:match('%.wait$') and num(v) > now then return true end end
  return false
end

-- unreadable: state field k holds a time or counter that is no whole number, an id no id.
local TIMES = {clock = 1, seq = 1, since = 1, every = 1, hold_from = 1, hold_till = 1}
local POOL_TIMES = {block = 1, wait = 1, ['until'] = 1, base = 1}
local function unreadable(k, v)
  local field = string.match(k, '%.([^.]*)$')
  if TIMES[k] or POOL_TIMES[field] then return not whole(tonumber(v), 0) end
  if k == 'last' or field == 'last' then return not string.match(v, '^%d+%-%d+$') end
  if k == 'need' or k == 'done' then return not decode(v) end
end
local function readable(st)
  for k, v in pairs(st) do if unreadable(k, v) then corrupt('state field ' .. k .. ' cannot be read') end end
end

-- trimmed is the id p's log begins with when entries left its head that the limiter did not
-- trim (the sum before it is not the state's).
local function trimmed(p, st)
  local first, base = head(p)
  if first and st[p.name .. '.base'] and base ~= tonumber(st[p.name .. '.base']) then return first end
end

-- loss names what shows that Redis lost data this ledger or the state knows of (promise 9).
local function loss(st, now)
  readable(st)
  for _, p in ipairs(P) do
    local want = st[p.name .. '.last']
    if p.top ~= want and not (p.top == nil and want and ms_of(want) <= horizon(p, now)) then
      return 'the log of pool ' .. p.name .. ' does not end where the state says'
    end
    local first = trimmed(p, st)
    if first and ms_of(first) > horizon(p, now) then
      return 'the log of pool ' .. p.name .. ' lost entries of its window from its head'
    end
  end
  local mark = own_mark()
  if mark and ms_of(mark) > now - a.span and (not st.last or id_less(st.last, mark)) then
    return 'the state is older than the ledgers it has seen'
  end
  if (a.mark or '') ~= '' and (not mark or id_less(mark, a.mark)) and ms_of(a.mark) > now - a.span then
    return 'calls of ledger ' .. a.ledger .. ' up to ' .. a.mark .. ' are missing'
  end
  if active(st, now) and list_has(decode(st.need), a.ledger) and not list_has(decode(st.done or '[]'), a.ledger) then
    return 'a recovery waits for ledger ' .. a.ledger
  end
end

-- spend decides one call: all of its pools have room, or none is charged.
function modes.spend()
  if redis.call('SISMEMBER', FENCE, fmt(a.token)) == 1 then return {code = 'fenced'} end
  local st = state()
  local now, guarded = clock(st)
  -- the upstream's clock (upstream.go): never decide on a wrong day
  if (a.upstream or 0) > 0 and math.abs(now - a.upstream) > a.guard then return {code = 'skew', at = now} end
  if redis.call('EXISTS', CONF) == 0 then return {code = 'noconf'} end
  for _, p in ipairs(P) do
    local c = redis.call('HGET', CONF, p.name) or ''
    if c ~= p.conf then return {code = 'conf', pool = p.name, conf = c} end
  end
  local why = loss(st, now)
  if why then return {code = 'lost', why = why} end
  local ok, r = true, {at = now, guarded = guarded, pools = {}}
  for i, p in ipairs(P) do
    r.pools[i] = view(p, st, now)
    if p.day == false then return {code = 'clock'} end
    ok = ok and p.free == 0
  end
  r.code = ok and 'ok' or 'no'
  if ok then
    local seq = num(st.seq) + 1
    r.id = fmt(now) .. '-' .. fmt(seq)
    for i, p in ipairs(P) do
      p.cum = p.cum + p.units
      redis.call('XADD', p.key, r.id, 'u', fmt(p.units), 'c', fmt(p.cum))
      redis.call('XTRIM', p.key, 'MINID', fmt(horizon(p, now) + 1))
      expire(p.key)
      set_last(p, r.id)
      r.pools[i] = view(p, st, now)
    end
    redis.call('HSET', S, 'seq', fmt(seq), 'last', r.id)
    register(r.id, now, true)
    redis.call('HSET', RCPT, fmt(a.token % 32), fmt(a.token) .. ' ' .. r.id)
    expire(RCPT)
  end
  keep_clock(now)
  return r
end

-- entries_of reads p's log as {id, u}, the sum before it, and whether every sum follows on.
local function entries_of(p)
  local out, base, c, chained = {}, 0, nil, true
  for i, e in ipairs(redis.call('XRANGE', p.key, '-', '+')) do
    local f = fields(e)
    if i == 1 then base = f.c - f.u elseif f.c ~= c + f.u then chained = false end
    out[i], c = {e[1], f.u}, f.c
  end
  return out, base, chained
end

-- rebuild writes p's log anew from entries {id, u} (no id twice), sorted, with running sums
-- from base on (a stream only appends; refills and refunds change the past).
local function rebuild(p, entries, base)
  local kept = redis.call('HGET', S, p.name .. '.base')
  local lost = trimmed(p, {[p.name .. '.base'] = kept})
  table.sort(entries, function(x, y) return id_less(x[1], y[1]) end)
  redis.call('DEL', p.key)
  for _, e in ipairs(entries) do
    base = base + e[2]
    redis.call('XADD', p.key, e[1], 'u', fmt(e[2]), 'c', fmt(base))
  end
  if #entries > 0 then expire(p.key) end
  set_last(p, entries[#entries] and entries[#entries][1])
  -- a head lost before stays lost to the next decision (loss), however the log was rewritten
  if lost then redis.call('HSET', S, p.name .. '.base', kept) end
end

-- settle marks this ledger done in a recovery (one the finder could not name joins the
-- lists). Once all are done, the pools wait for the quiet period (docs/explanation/quota.md, "When Redis loses data"): the start plus the
-- longest cadence reported (a.every; with a.idle, at least the time since the last call). A
-- recovery that names nobody waits for time alone; calls written back for no ledger (an
-- outage's unmetered ones) settle nothing.
local function settle(st, now)
  local need, done = decode(st.need), decode(st.done or '[]')
  if #need == 0 or a.ledger == '' then return end
  if not list_has(need, a.ledger) then need[#need + 1] = a.ledger end
  if not list_has(done, a.ledger) then done[#done + 1] = a.ledger end
  local cadence = num(a.every)
  if a.idle and (a.mark or '') ~= '' then cadence = math.max(cadence, now - ms_of(a.mark)) end
  local every = math.max(num(st.every), cadence)
  redis.call('HSET', S, 'need', cjson.encode(need), 'done', cjson.encode(done), 'every', fmt(every))
  for _, l in ipairs(need) do if not list_has(done, l) then return end end
  local quiet = num(st.since) + every
  if quiet <= now then return modes.release() end
  for k, v in pairs(st) do
    local pool = string.match(k, '^(.*)%.until$')
    if pool then redis.call('HSET', S, pool .. '.wait', fmt(math.min(num(v), quiet))) end
  end
end

-- refill puts a ledger's calls (each once) and blocks back; in a recovery, marks it done.
function modes.refill()
  local st = state()
  local now = clock(st)
  local n, added, seq = 0, {}, num(st.seq)
  for _, p in ipairs(P) do
    local entries, base = entries_of(p)
    local have, grew = {}, false
    for _, e in ipairs(entries) do have[e[1]] = true end
    for _, c in ipairs(p.calls or {}) do
      if not have[c[1]] and ms_of(c[1]) > horizon(p, now) then
        entries[#entries + 1], have[c[1]], grew = {c[1], c[2]}, true, true
        if not added[c[1]] then added[c[1]], n = true, n + 1 end
        local _, s = id_parts(c[1])
        if s < EMBEDDED and s > seq then seq = s end
      end
    end
    if grew then rebuild(p, entries, base) end
    local block = num(p.block)
    if block > math.max(now, num(st[p.name .. '.block'])) then redis.call('HSET', S, p.name .. '.block', fmt(block)) end
  end
  if seq > num(st.seq) then redis.call('HSET', S, 'seq', fmt(seq)) end
  st = state()
  if (a.mark or '') ~= '' then
    local mark = own_mark()
    if not mark or id_less(mark, a.mark) then register(a.mark, now) end
    if not st.last or id_less(st.last, a.mark) then redis.call('HSET', S, 'last', a.mark) end
  end
  -- a recovery whose waits all passed is over
  if active(st, now) then settle(st, now) elseif st.need then modes.release() end
  keep_clock(now)
  return {code = 'ok', n = n}
end

-- scrub drops what cannot be read: logs, state fields, ledgers' entries, a clock ahead of
-- every entry and mark; the recovery puts it back from the ledgers. True when it dropped any
-- or a log lost its head.
local function scrub(st)
  local dropped = false
  for _, p in ipairs(P) do
    local ok, _, _, chained = pcall(entries_of, p)
    if not (ok and chained) then redis.call('DEL', p.key) set_last(p, nil) dropped = true
    elseif trimmed(p, st) then dropped = true end
  end
  for k, v in pairs(st) do if unreadable(k, v) then redis.call('HDEL', S, k) dropped = true end end
  for _, l in ipairs(ledgers()) do if not l.e then redis.call('HDEL', LEDGERS, l.name) dropped = true end end
  if not pcall(clock, state()) then redis.call('HDEL', S, 'clock') dropped = true end
  return dropped
end

-- lost starts a recovery: every pool waits, admitting nothing metered, until the ledgers in
-- a.need have refilled and a quiet period has passed (settle), or its window and current day
-- have; a lost configuration is written back from this worker's; one under way is left be.
function modes.lost()
  local dropped = scrub(state())
  local st = state()
  local now = clock(st)
  for _, p in ipairs(P) do redis.call('HSETNX', CONF, p.name, p.conf) end
  -- what was just dropped may hold calls of ledgers already done: they are waited for again
  if active(st, now) and not dropped then return {code = 'ok', started = false} end
  for _, p in ipairs(P) do
    local day, wait = day_of(p.days, now), now + p.window
    if day then wait = math.max(wait, day[2]) end
    redis.call('HSET', S, p.name .. '.wait', fmt(wait), p.name .. '.until', fmt(wait))
    set_last(p, p.top)
  end
  -- a ledger the limiter lists as having spent is waited for too, if this worker could vouch
  local need, last = a.need or {}, st.last
  for _, l in ipairs(ledgers()) do
    if not last or id_less(last, l.e.mark) then last = l.e.mark end
    if #need > 0 and l.e.at > now - a.span and not list_has(need, l.name) then need[#need + 1] = l.name end
  end
  if last then redis.call('HSET', S, 'last', last) end
  redis.call('HSET', S, 'need', cjson.encode(need), 'done', '[]', 'since', fmt(now), 'every', '0')
  if num(a.seq) > num(st.seq) then redis.call('HSET', S, 'seq', fmt(a.seq)) end
  keep_clock(now)
  return {code = 'ok', started = true}
end

-- release ends a recovery's wait (an operator's restore, or every ledger refilled).
function modes.release()
  for k in pairs(state()) do if k:match('%.wait$') or k:match('%.until$') then redis.call('HDEL', S, k) end end
  redis.call('HDEL', S, 'need', 'done', 'since', 'every')
  return {code = 'ok'}
end

-- block refuses the pool's calls, every worker's, until its next day (by the limiter's clock).
function modes.block()
  local st, p = state(), P[1]
  local day = day_of(p.days, clock(st))
  if not day then return {code = 'clock'} end
  local u = math.max(day[2], num(st[p.name .. '.block']))
  redis.call('HSET', S, p.name .. '.block', fmt(u))
  expire(S)
  return {code = 'ok', ['until'] = u}
end

-- refund takes an admitted call that never reached the upstream out of every pool's log.
function modes.refund()
  for _, p in ipairs(P) do
    if redis.call('XRANGE', p.key, a.id, a.id)[1] then
      local entries, base = entries_of(p)
      for i, e in ipairs(entries) do if e[1] == a.id then table.remove(entries, i) break end end
      rebuild(p, entries, base)
    end
  end
  return {code = 'ok'}
end

-- read is every pool, the recovery and the ledgers, writing nothing (it runs read-only).
function modes.read()
  local st = state()
  local now = clock(st)
  readable(st)
  local r = {code = 'ok', at = now, pools = {}, conf = {}, ledgers = {},
    need = decode(st.need) or {}, done = decode(st.done) or {}, recovering = active(st, now)}
  for i, p in ipairs(P) do
    r.pools[i] = view(p, st, now)
    r.conf[i] = redis.call('HGET', CONF, p.name) or ''
  end
  for _, l in ipairs(ledgers()) do
    if not l.e then corrupt('the entry of ledger ' .. l.name .. ' cannot be read') end
    l.e.ledger = l.name
    r.ledgers[#r.ledgers + 1] = l.e
  end
  return r
end

-- apply writes this worker's settings as the limiter's.
function modes.apply()
  for _, p in ipairs(P) do redis.call('HSET', CONF, p.name, p.conf) end
  return {code = 'ok'}
end

-- a mode that met corrupt state answers 'lost'; any other error is Redis's (never a decision)
local ok, r = pcall(modes[mode])
if ok then return cjson.encode(r) end
if type(r) == 'table' and r.corrupt then return cjson.encode({code = 'lost', why = r.corrupt}) end
error(r, 0)
