-- The normalized search index replaces version 1's (unicode61 over the
-- raw text); a Go hook indexes every stored video again, in batches
-- (migrate_hooks.go).
DROP TRIGGER videos_fts_insert;
DROP TRIGGER videos_fts_delete;
DROP TRIGGER videos_fts_update;
DROP TABLE videos_fts;
CREATE VIRTUAL TABLE videos_fts USING fts5(
  title, description, tags, channel_title,
  content = '', contentless_delete = 1, tokenize = 'ascii'
);
INSERT INTO videos_fts (videos_fts, rank) VALUES ('rank', 'bm25(10.0, 2.0, 4.0, 4.0)');
CREATE TRIGGER videos_fts_insert AFTER INSERT ON videos BEGIN
  INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
  VALUES (new.vid, ingest_words(new.title), ingest_words(new.description),
    ingest_words((SELECT group_concat(value, ' ') FROM json_each(new.tags))),
    ingest_words(new.channel_title));
END;
CREATE TRIGGER videos_fts_delete AFTER DELETE ON videos BEGIN
  DELETE FROM videos_fts WHERE rowid = old.vid;
END;
CREATE TRIGGER videos_fts_update AFTER UPDATE OF vid, title, description, tags, channel_title ON videos
WHEN old.vid IS NOT new.vid OR old.title IS NOT new.title OR old.description IS NOT new.description
  OR old.tags IS NOT new.tags OR old.channel_title IS NOT new.channel_title
BEGIN
  DELETE FROM videos_fts WHERE rowid = old.vid;
  INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
  VALUES (new.vid, ingest_words(new.title), ingest_words(new.description),
    ingest_words((SELECT group_concat(value, ' ') FROM json_each(new.tags))),
    ingest_words(new.channel_title));
END;
