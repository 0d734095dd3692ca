-- gcra.lua decides one API request (package ratelimit): GCRA on one key,
-- the client's theoretical arrival time (TAT) in microseconds of the
-- server's clock. Integers throughout: every time stays below 2^53, so a
-- Lua number holds it exactly.
--
-- KEYS[1]  the client's key
-- ARGV[1]  interval: microseconds one unit takes to come back
-- ARGV[2]  tolerance: how far ahead of now the TAT may be (burst x interval)
-- ARGV[3]  cost: the request's units
--
-- Answers {allowed (1 or 0), now, the TAT after the decision}.
local interval, tolerance, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)

-- A client idle past its TAT starts from now: it never banks more than
-- its burst.
local nxt = math.max(tat, now) + cost * interval
if nxt - now > tolerance then
  return {0, now, tat}
end
-- The key is worth keeping until its TAT passes, and not a moment longer.
redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.ceil((nxt - now) / 1000))
return {1, now, nxt}
