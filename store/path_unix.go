//go:build unix

package store

import "golang.org/x/sys/unix"

// writable asks the kernel whether this user may write path, as SQLite
// will; for root, only a read-only mount says no.
func writable(path string) error { return unix.Access(path, unix.W_OK) }
