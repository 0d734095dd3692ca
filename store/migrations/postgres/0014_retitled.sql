-- Step 14: a video keeps when what a feed shows of it beside its place
-- (its title, its channel's name and id) last changed from what was
-- stored, so that a feed's entry is dated by a title changed upstream
-- (docs/api.md, "Feeds"). NULL: unchanged since it was first stored, or
-- since this column was added.
ALTER TABLE videos ADD COLUMN retitled_ms bigint;
