//go:build linux || darwin || freebsd || netbsd || openbsd

package publish

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the file a publish holds a lock on while it writes, so that
// two publishes (the daemon's and a command's) never interleave their
// renames and removals in one directory.
const lockName = ".ingest-publish.lock"

// lock takes dir's lock, or says another publish holds it; the function
// returned releases it.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("publish %s: %w", dir, ErrBusy)
		}
		return nil, fmt.Errorf("publish: lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
