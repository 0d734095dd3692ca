-- Step 2: two more columns in the search index, so that the queries of a
-- broad search are answered from the index's lists rather than by testing
-- row after row. regions: the regions a video trended or was found in, as
-- lexemes (a plain lexeme needs no second look at the row; an array's
-- containment does), for a search in one region. title: the title's
-- words (those of weight A), for a broad query's title matches, which
-- the weights of doc cannot select in the index.
ALTER TABLE video_docs ADD COLUMN regions TSVECTOR NOT NULL DEFAULT '',
  ADD COLUMN title TSVECTOR GENERATED ALWAYS AS (ts_filter(doc, '{a}')) STORED;
UPDATE video_docs AS d SET regions = r.regions
FROM (SELECT vid, array_to_tsvector(array_agg(region)) AS regions FROM video_regions GROUP BY vid) AS r
WHERE r.vid = d.vid;
DROP INDEX video_docs_doc;
CREATE INDEX video_docs_doc ON video_docs USING gin (doc, regions, title);

-- A video's regions only grow (a prune deletes them with the video). A
-- page writes its videos' rows here before their regions: this adds each
-- region new to a video. The append is made under the row's lock, so two
-- hosts adding two regions at once keep both.
CREATE FUNCTION video_docs_region() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE video_docs SET regions = regions || array_to_tsvector(ARRAY[NEW.region])
  WHERE vid = NEW.vid AND NOT tsvector_to_array(regions) @> ARRAY[NEW.region]::text[];
  RETURN NULL;
END $$;
CREATE TRIGGER video_docs_region AFTER INSERT ON video_regions
  FOR EACH ROW EXECUTE FUNCTION video_docs_region();
