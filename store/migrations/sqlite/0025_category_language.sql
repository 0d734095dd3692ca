-- The language a region's category names were asked in (videoCategories.list's
-- hl), so that an export gives each category's English name and its name in
-- the region's language. '': the upstream's default, English, as every
-- name stored before was asked.
ALTER TABLE categories ADD COLUMN language TEXT NOT NULL DEFAULT '';
