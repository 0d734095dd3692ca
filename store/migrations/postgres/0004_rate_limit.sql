-- Step 4: the read API's request limiter (ratelimit/postgres.go), shared by
-- every host on the database without Redis: one row per plan and client,
-- GCRA's theoretical arrival time. Unlogged: each request rewrites its row,
-- and what a crash of the server loses is one burst per client, not
-- anything the upstream charges for.
CREATE UNLOGGED TABLE api_limits (
  key     TEXT COLLATE "C" PRIMARY KEY,  -- plan:client
  tat     BIGINT NOT NULL,               -- the server's clock, Unix microseconds
  at      BIGINT NOT NULL,               -- the last decision's clock
  allowed BOOLEAN NOT NULL               -- the last decision
);
