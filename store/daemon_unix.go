//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// DaemonRunningError: another daemon already runs on the SQLite file.
type DaemonRunningError struct {
	Path string
	// Holder is what the first daemon wrote: its pid, host and start.
	Holder string
}

func (e *DaemonRunningError) Error() string {
	return fmt.Sprintf("%s: another daemon already runs on this database (%s): stop it first, or give this one another --db; "+
		"one daemon per SQLite file, run --once beside it is fine (docs/operations.md)", e.Path, e.Holder)
}

// ClaimDaemon makes this process the one daemon on the SQLite file at
// path, until release is called or the process ends: a lock the kernel
// holds on PATH.daemon, so that a daemon that died frees it at once. A
// second daemon gets a DaemonRunningError naming the first. On PostgreSQL
// every host may run one: the leases share the work.
func ClaimDaemon(path string) (release func(), err error) {
	if IsURL(path) {
		return func() {}, nil
	}
	name := path + ".daemon"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("claim the daemon's lock %s: %w", name, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			b := make([]byte, 512)
			n, _ := f.ReadAt(b, 0)
			return nil, &DaemonRunningError{Path: path, Holder: strings.TrimSpace(string(b[:n]))}
		}
		return nil, fmt.Errorf("claim the daemon's lock %s: %w", name, err)
	}
	host, _ := os.Hostname()
	f.Truncate(0)
	f.WriteAt([]byte(fmt.Sprintf("pid %d, host %s, since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))), 0)
	return func() { f.Truncate(0); f.Close() }, nil
}
