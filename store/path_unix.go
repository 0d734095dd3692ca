//go:build unix

package store

import (
	"errors"

	"golang.org/x/sys/unix"
)

// writable asks the kernel whether this user may write path, as SQLite
// will; for root, only a read-only mount says no.
func writable(path string) error { return unix.Access(path, unix.W_OK) }

// readOnlyFS says whether err is the kernel's answer for a file system
// mounted read-only, which no chown or chmod changes.
func readOnlyFS(err error) bool { return errors.Is(err, unix.EROFS) }
