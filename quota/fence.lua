-- fence.lua: the decisions of unknown outcome (unknown.go), with window.lua's KEYS and ARGV.
-- window.lua writes each admission's receipt, "token id" in slot token % 32 of KEYS[4]; this
-- fences an instance's tokens in KEYS[5] (a request still on its way is refused) and says under
-- which id each was admitted ('' none, '?' a later admission wrote over its receipt).
local RCPT, FENCE, a = KEYS[4], KEYS[5], cjson.decode(ARGV[2])
local ids = {}
for i, tok in ipairs(a.tokens) do
  local t = string.format('%d', tok)
  redis.call('SADD', FENCE, t)
  local by, id = string.match(redis.call('HGET', RCPT, string.format('%d', tok % 32)) or '', '^(%d+) (.+)$')
  ids[i] = (by == t and id) or (by and tonumber(by) > tok and '?') or ''
end
redis.call('PEXPIRE', FENCE, a.ttl)
return cjson.encode({code = 'ok', ids = ids})
