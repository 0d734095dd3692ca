-- The region catalogue as i18nRegions.list last named it: what --regions
-- all selects and what reports name each region by. A read replaces it
-- whole; fetched_ms, the same on every row, says when it was read.
CREATE TABLE region_catalogue (
  code       TEXT    PRIMARY KEY,   -- ISO 3166-1 alpha-2
  name       TEXT    NOT NULL,      -- in English (hl=en_US)
  fetched_ms INTEGER NOT NULL
) WITHOUT ROWID;
