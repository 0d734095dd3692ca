-- The schedule a daemon or a cron run records carries the day's plan it
-- printed at start (JSON: each pool's units a day, tracking's among them)
-- and the costs it runs with (costs.yaml's canonical form), so that every
-- view shows that one plan and a command reading with other costs can say
-- so. Empty: a record of an earlier version.
ALTER TABLE schedule ADD COLUMN plan TEXT NOT NULL DEFAULT '';
ALTER TABLE schedule ADD COLUMN costs TEXT NOT NULL DEFAULT '';
