-- A pool's use in its window (the embedded limiter's at every take, every
-- report's) is read from that pool's calls alone, by key, pool and time,
-- not from every pool's calls of the window: tracking's calls, the most
-- numerous, no longer weigh on the other pools' reads. Units in it, a
-- read needs no row beside it.
CREATE INDEX ledger_pool ON ledger (quota_key, pool, at_ms, units);
