-- Step 17: a backfill's page whose search the upstream answered (and
-- charged) before its videos' details were stored: their ids, kept with
-- the cursor as soon as the search is answered, so that a signal, a
-- refusal of the details or a crash between the two calls costs no search
-- twice (docs/operations.md, "Backfills"). '': none waiting.
ALTER TABLE backfill_cursors ADD COLUMN pending text DEFAULT '' NOT NULL COLLATE "C";
