-- Step 9: the schedule a daemon or a cron run records is its whole
-- timetable (each region's tier and depth, the categories, the period and
-- the staleness bound), so that every view of the plan reads the schedule
-- the run follows. Empty: a record of an earlier version, its regions at
-- tier 1.
ALTER TABLE schedule ADD COLUMN timetable TEXT COLLATE "C" NOT NULL DEFAULT '';
