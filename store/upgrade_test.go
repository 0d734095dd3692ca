package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
)

// A host of this version on a PostgreSQL database that a newer host
// migrates while it runs writes nothing after the migration: a write begun
// while the migration holds its lock, and every write after it, is refused
// with a VersionError naming the upgrade.
func TestWritesStopAtANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.URL(t)
	db := openURL(t, url)
	run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, vid("a", "before")))
	newer := openURL(t, url)
	tx, err := newer.Writer().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`SELECT pg_advisory_xact_lock(?1)`, int64(pgLockKey)); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := db.StartRun(ctx, "GB", "", ingest.Trending, t0)
		waited <- err
	}()
	if _, err := tx.Exec(`INSERT INTO schema_version (step, applied_ms) VALUES (?1, ?2)`, PGSchemaVersion+1, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var ve *VersionError
	if err := <-waited; !errors.As(err, &ve) || ve.Have != PGSchemaVersion+1 {
		t.Errorf("a run started while a newer host migrated: %v, want a VersionError at step %d", err, PGSchemaVersion+1)
	}
	err = db.SavePage(ctx, 1, page(ingest.Trending, "US", 2, t0, vid("b", "after")))
	if !errors.As(err, &ve) {
		t.Errorf("a page stored after the migration: %v, want a VersionError", err)
	}
	if n := count(t, db, `SELECT count(*) FROM runs`); n != 1 {
		t.Errorf("%d runs after the migration, want the 1 from before it", n)
	}
	if n := count(t, db, `SELECT count(*) FROM videos WHERE id = 'b'`); n != 0 {
		t.Errorf("the page after the migration was stored")
	}
}
