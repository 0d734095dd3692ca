package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
)

// searchIndexV2 is the index of schema version 2, frozen as that version
// wrote it: schema.sql may move on, this step may not.
const searchIndexV2 = `
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
END;`

// fillSearchIndexSQL indexes the next batch of videos after vid ?1.
const fillSearchIndexSQL = `
INSERT INTO videos_fts (rowid, title, description, tags, channel_title)
SELECT vid, ingest_words(title), ingest_words(description),
  ingest_words((SELECT group_concat(value, ' ') FROM json_each(tags))),
  ingest_words(channel_title)
FROM videos WHERE vid > ?1 AND vid <= ?2`

// rebuildBatch is how many videos are indexed between progress lines.
const rebuildBatch = 20_000

// upgradeSearchIndex replaces version 1's index (unicode61 over the raw
// text) with the normalized one and indexes every stored video again, in
// the migration's transaction: a failure leaves the old index whole. Large
// databases log a progress line per batch (200,000 videos take about a
// minute).
func upgradeSearchIndex(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, searchIndexV2); err != nil {
		return fmt.Errorf("replace search index: %w", err)
	}
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM videos`).Scan(&total); err != nil {
		return fmt.Errorf("count videos: %w", err)
	}
	log := slog.Default().With("step", "search index")
	if total > rebuildBatch {
		log.InfoContext(ctx, "store: rebuilding the search index", "videos", total)
	}
	var last, done int64
	for done < total {
		n, hi, err := fillBatch(ctx, tx, last)
		if err != nil {
			return fmt.Errorf("rebuild search index after video %d: %w", last, err)
		}
		if n == 0 {
			break
		}
		last, done = hi, done+n
		if total > rebuildBatch {
			log.InfoContext(ctx, "store: rebuilding the search index", "done", done, "videos", total)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO videos_fts (videos_fts) VALUES ('optimize')`); err != nil {
		return fmt.Errorf("optimize search index: %w", err)
	}
	return nil
}

// fillBatch indexes up to rebuildBatch videos after vid last and returns
// how many it indexed and the highest vid among them.
func fillBatch(ctx context.Context, tx *sql.Tx, last int64) (n, hi int64, err error) {
	var top sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT max(vid), count(*) FROM (SELECT vid FROM videos WHERE vid > ? ORDER BY vid LIMIT ?)`,
		last, rebuildBatch).Scan(&top, &n)
	if err != nil || !top.Valid {
		return 0, 0, err
	}
	_, err = tx.ExecContext(ctx, fillSearchIndexSQL, last, top.Int64)
	return n, top.Int64, err
}
