-- The rows a prune cuts sit together: the tracked counts and the daily
-- rollup are keyed by the UTC day (its 00:00, in ms), then the video, and
-- the entries' order by video is led by the day of their fetch, so that a
-- cut of whole days deletes whole runs of each index. A read of one video
-- seeks it day by day over the days it asks for.
--
-- The three tables hold no foreign key to videos any more: deleting a
-- video would look it up in each by video, an order none keeps now;
-- retention deletes a video's rows before the video.
ALTER TABLE trending_entries DROP CONSTRAINT trending_entries_vid_fkey;
DROP INDEX trending_entries_vid;
CREATE INDEX trending_entries_day ON trending_entries ((fetched_ms / 86400000 * 86400000), vid, fetched_ms);

ALTER TABLE video_stats DROP CONSTRAINT video_stats_vid_fkey;
ALTER TABLE video_stats ADD COLUMN day_ms bigint;
ALTER TABLE video_stats DISABLE TRIGGER video_days_stat;
UPDATE video_stats SET day_ms = at_ms / 86400000 * 86400000;
ALTER TABLE video_stats ENABLE TRIGGER video_days_stat;
ALTER TABLE video_stats ALTER COLUMN day_ms SET NOT NULL;
ALTER TABLE video_stats ADD CONSTRAINT video_stats_day CHECK (day_ms = at_ms / 86400000 * 86400000);
ALTER TABLE video_stats DROP CONSTRAINT video_stats_pkey;
ALTER TABLE video_stats ADD PRIMARY KEY (day_ms, vid, at_ms);

ALTER TABLE video_days DROP CONSTRAINT video_days_vid_fkey;
ALTER TABLE video_days DROP CONSTRAINT video_days_pkey;
ALTER TABLE video_days ADD PRIMARY KEY (day_ms, vid, region, category);
