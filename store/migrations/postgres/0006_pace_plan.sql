-- Step 6: the plan of the daemon that paces, by quota key: what report,
-- the API, the dashboard and a backfill's share read, so that they show
-- the plan the daemon follows rather than one of their own. plan is pace's
-- JSON.
CREATE TABLE pace_plans (
  quota_key  TEXT PRIMARY KEY,
  written_ms BIGINT NOT NULL,
  plan       TEXT NOT NULL
);
