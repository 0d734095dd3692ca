-- The embedded limiter sums a pool's units over its window at every
-- decision: the index by time carries the units, so that the sum reads the
-- index alone instead of looking up each entry in the table.
DROP INDEX quota_log_at;
CREATE INDEX quota_log_at ON quota_log (quota_key, pool, at_ms, units);
