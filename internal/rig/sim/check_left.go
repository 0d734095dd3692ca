package sim

// What the product leaves beside the database. Every file it writes there
// for a while has a name of its own and is removed when its work ends
// (docs/operations/growing.md: a copy's snapshot, "removed at the end";
// docs/operations/backups.md: a backup appears whole under its name,
// written under another first; prune --dry-run's image, dropped): one
// left behind is a whole database's worth of disk gone each time, which
// no count of the history shows.

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
)

// temporary names the files the product writes only for a while: a
// SQLite copy's snapshot (with its part and its -wal/-shm), a backup's
// or an image's part, prune --dry-run's image, the publish's probe.
var temporary = regexp.MustCompile(`\.copy-[0-9a-f]+|\.(new|part)(-wal|-shm|-journal)?$|\.dry-run\.|\.ingest-publish-probe-`)

// leftIn is every file under dir, by its path from dir, when the history
// ends.
func leftIn(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, err := filepath.Rel(dir, path); err == nil {
				out = append(out, rel)
			}
		}
		return nil
	})
	return out
}

// checkLeft: no file the product writes for a while is left under the
// history's folder when it ends.
func checkLeft(h *History) []string {
	var left []string
	for _, f := range h.Left {
		if temporary.MatchString(filepath.Base(f)) {
			left = append(left, f)
		}
	}
	if len(left) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d files the product writes for a while were left beside the database at the end: %s", len(left), firstFew(left))}
}
