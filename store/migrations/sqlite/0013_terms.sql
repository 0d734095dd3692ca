-- The upstream's terms (docs/explanation/terms.md): a video the upstream no longer
-- returns leaves a tombstone that keeps only its id and the day it went;
-- backfill results are pruned by the time they were fetched.
CREATE TABLE videos_gone (
  id      TEXT    PRIMARY KEY,           -- the upstream's video id
  gone_ms INTEGER NOT NULL               -- when a refresh found it gone
) WITHOUT ROWID;
CREATE INDEX search_results_fetched ON search_results (fetched_ms);
CREATE INDEX categories_fetched ON categories (fetched_ms);
