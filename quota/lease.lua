-- lease.lua: renew or release a lease, only for the holder of its token.
-- KEYS[1] the lease; ARGV[1] the holder's token; ARGV[2] "renew" or "release";
-- ARGV[3] the new ttl in ms (renew). Returns 1 when the token matched.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'release' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[3])
