package sim

import (
	"strings"
	"testing"
)

func TestCheckFindsAFileLeftThatTheProductRemoves(t *testing.T) {
	kept := []string{"ingest.db", "ingest.db-wal", "ingest.db-shm", "copy.db", "daemon.log", "beside.log", "backups/ingest-20261225T000000Z.db"}
	for _, c := range []struct {
		name string
		left []string
		want string
	}{
		{"what the history keeps", kept, ""},
		{"a copy's snapshot", append(kept, "ingest.db.copy-1a2b3c4d"), "1 files the product writes for a while were left beside the database at the end: ingest.db.copy-1a2b3c4d"},
		{"a snapshot's part", append(kept, "ingest.db.copy-1a2b3c4d.new", "ingest.db.copy-1a2b3c4d.new-wal"), "2 files"},
		{"a backup's part", append(kept, "backups/ingest-20261225T000000Z.db.part"), "backups/ingest-20261225T000000Z.db.part"},
		{"a dry run's image", append(kept, ".ingest.db.dry-run.4242"), ".ingest.db.dry-run.4242"},
	} {
		f := checkLeft(&History{Left: c.left})
		if c.want == "" && len(f) != 0 || c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
}
