//go:build unix

package store

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// FreeBytes is the space this user may still write on the file system that
// holds the database at path (its directory's).
func FreeBytes(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
