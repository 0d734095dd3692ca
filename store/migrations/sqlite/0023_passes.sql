-- The passes of the work that has no run row (tracking, the refresh, the
-- prune), one row each as it ends, with the slot a daemon ran it for
-- beside its start: pacing credits every kind of pass to its slot,
-- whatever its length, as it credits a chart's run by its slot_ms
-- (docs/explanation/pacing.md). slot_ms NULL: a pass no slot started (a
-- catch-up at start, run --once).
CREATE TABLE passes (
  entry       TEXT    NOT NULL,
  started_ms  INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  slot_ms     INTEGER,
  status      TEXT    NOT NULL CHECK (status IN ('completed', 'stopped', 'interrupted', 'skipped', 'failed')),
  PRIMARY KEY (entry, started_ms)
) WITHOUT ROWID;
-- Pacing reads the passes of the last days, never the whole table.
CREATE INDEX passes_started ON passes (started_ms);
