//go:build unix

package store

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ingestworks/ingest"
)

// DaemonRunningError: another daemon already runs on the SQLite file.
type DaemonRunningError struct {
	Path string
	// Holder is what the first daemon wrote: its pid, host, start and
	// the name it gave the file.
	Holder string
}

func (e *DaemonRunningError) Error() string {
	return fmt.Sprintf("%s: another daemon already runs on this database (%s): stop it first, or give this one another --db; "+
		"one daemon per SQLite file, however it is named, run --once beside it is fine (docs/operations.md)", e.Path, e.Holder)
}

// daemonFiles holds, for the life of the process, one descriptor per
// database file a daemon claimed, by device and inode. It is never
// closed: closing any descriptor of a file drops every fcntl lock the
// process holds on it, and SQLite keeps its own locks on the database
// file that way, so the claim's descriptor outlives the store.
var daemonFiles = struct {
	sync.Mutex
	open map[[2]uint64]*daemonFile
}{open: map[[2]uint64]*daemonFile{}}

type daemonFile struct {
	f    *os.File
	held bool
}

// ClaimDaemon makes this process the one daemon on the SQLite file at
// path, until release is called or the process ends: a lock the kernel
// holds on the database file itself (flock, which SQLite's own fcntl
// locks do not meet), so that a symlink, a hard link, a relative path or
// a bind mount of the same file is refused as the path is, and a daemon
// that died frees it at once. A second daemon gets a DaemonRunningError
// naming the first, as it wrote itself in PATH.daemon beside the file's
// real path, as a configuration error (ingest.ConfigError): the fix is
// another --db, or the first daemon stopped. On PostgreSQL every host may
// run one: the leases share the work.
func ClaimDaemon(path string) (release func(), err error) {
	if IsURL(path) {
		return func() {}, nil
	}
	real, err := realPath(path)
	if err != nil {
		return nil, fmt.Errorf("claim the daemon's lock on %s: %w", path, err)
	}
	daemonFiles.Lock()
	defer daemonFiles.Unlock()
	d, key, err := openDaemonFile(real)
	if err != nil {
		return nil, fmt.Errorf("claim the daemon's lock on %s: %w", path, err)
	}
	if d.held {
		return nil, &ingest.ConfigError{Err: &DaemonRunningError{Path: path, Holder: holder(real, key)}}
	}
	if err := unix.Flock(int(d.f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &ingest.ConfigError{Err: &DaemonRunningError{Path: path, Holder: holder(real, key)}}
		}
		return nil, fmt.Errorf("claim the daemon's lock on %s: %w", path, err)
	}
	d.held = true
	host, _ := os.Hostname()
	note := fmt.Sprintf("pid %d, host %s, since %s, as %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339), real)
	os.WriteFile(real+".daemon", []byte(note), 0o644)
	return func() {
		daemonFiles.Lock()
		defer daemonFiles.Unlock()
		os.Remove(real + ".daemon")
		unix.Flock(int(d.f.Fd()), unix.LOCK_UN)
		d.held = false
	}, nil
}

// realPath is the name the file has once symlinks and the working
// directory are resolved, where the daemon's note is written.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// openDaemonFile is the process's descriptor of the file at real, opened
// once per device and inode.
func openDaemonFile(real string) (*daemonFile, [2]uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return nil, [2]uint64{}, err
	}
	key := [2]uint64{uint64(st.Dev), uint64(st.Ino)}
	if d, ok := daemonFiles.open[key]; ok {
		return d, key, nil
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, key, err
	}
	d := &daemonFile{f: f}
	daemonFiles.open[key] = d
	return d, key, nil
}

// holder is what the daemon holding the file wrote of itself; through
// another directory's hard link its note is not beside real, and the
// kernel's table of locks still names its pid.
func holder(real string, key [2]uint64) string {
	if b, err := os.ReadFile(real + ".daemon"); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b))
	}
	if pid := lockPid(key); pid != "" {
		return "pid " + pid + ", through another name of the file"
	}
	return "a process holding the lock on the file"
}

// lockPid reads Linux's /proc/locks for the pid that holds a flock on
// the file with key's device and inode; "" where there is none to read.
func lockPid(key [2]uint64) string {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(key[0]), unix.Minor(key[0]), key[1])
	s := bufio.NewScanner(f)
	for s.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF
		f := strings.Fields(s.Text())
		if len(f) >= 6 && f[1] == "FLOCK" && f[5] == want {
			return f[4]
		}
	}
	return ""
}
