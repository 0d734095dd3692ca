package report

import (
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/store"
)

func TestShortNoteKeepsTheReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"quota refused videos.list", "quota refused videos.list"},
		{`categories: fetch US videoCategories.list: gave up after 4 attempts: Get "http://127.0.0.1:1/youtube/v3/videoCategories?alt=json&regionCode=US": dial tcp 127.0.0.1:1: connect: connection refused`,
			"…gave up after 4 attempts: dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		got := shortNote(tc.in)
		if got != tc.want && !(len([]rune(got)) <= maxNote && strings.HasSuffix(got, "connection refused")) {
			t.Errorf("shortNote(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "http://") || len([]rune(got)) > maxNote {
			t.Errorf("shortNote(%q) = %q: a URL or longer than %d", tc.in, got, maxNote)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{24 * time.Hour: "24h", 90 * time.Minute: "1h30m", time.Minute: "1m", 1500 * time.Millisecond: "1.5s"} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// TestStorageSaysFreePagesAreNotFreeDisk: the report's database line says
// its free figure is pages inside the file, so that it is not read as the
// disk's free space; a database that counts none says none.
func TestStorageSaysFreePagesAreNotFreeDisk(t *testing.T) {
	oldest := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		size store.Size
		want string
	}{
		{store.Size{Bytes: 12_300_000, FreeBytes: 0, Incremental: true, OldestRun: oldest},
			"Database 12.3 MB, 0.0 MB of it free pages inside the file (new rows reuse them; not free disk), oldest chart run 2026-11-20T09:00:00Z"},
		{store.Size{Bytes: 12_300_000, FreeBytes: 400_000},
			"Database 12.3 MB, 0.4 MB of it free pages inside the file (new rows reuse them; not free disk), oldest chart run none"},
		{store.Size{Bytes: 12_300_000, OldestRun: oldest}, // PostgreSQL
			"Database 12.3 MB, oldest chart run 2026-11-20T09:00:00Z"},
	} {
		if got := storageText(tc.size); got != tc.want {
			t.Errorf("storageText(%+v)\n got %s\nwant %s", tc.size, got, tc.want)
		}
	}
}
