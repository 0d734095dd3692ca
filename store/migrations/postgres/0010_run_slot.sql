-- Step 10: a daemon's pass records the slot it served beside its start, so
-- that a restarted pacer counts a pass that started late as its slot's, as
-- the running one did. NULL: a pass no slot started (a catch-up at start,
-- run --once, a cron's), or a run of an earlier version.
ALTER TABLE runs ADD COLUMN slot_ms BIGINT;
