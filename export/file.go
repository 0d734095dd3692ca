package export

import (
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Target is the file an export to path writes: path itself (a new file or
// a regular one), or the regular file a symbolic link at path leads to,
// which is written while the link is left as it is, as a shell's > would.
// Anything else is refused, whatever --force says, since the export's
// rename would replace it with a file: a device (/dev/null), a named pipe,
// a socket, a directory, and a link that leads nowhere (a file created at
// its target would land where nobody named; docs/data.md, Export).
func Target(path string) (string, error) { return target(path, exportInstead) }

// FileTarget is Target for a file that is not an export (a backup): the
// same refusals, and instead the way round them that fits.
func FileTarget(path, instead string) (string, error) { return target(path, instead) }

// exportInstead is what an export to a device or a pipe can do instead.
const exportInstead = "to send the rows there, give --out - and redirect stdout"

func target(path, instead string) (string, error) {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil
	case err != nil:
		return "", err
	case st.Mode()&fs.ModeSymlink == 0:
		return path, notRegular(path, st.Mode(), instead)
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		to, _ := os.Readlink(path)
		return "", fmt.Errorf("is a symbolic link to %s, which does not exist: name the file itself, or remove the link", to)
	}
	if st, err = os.Stat(target); err != nil {
		return "", err
	}
	if err := notRegular(target, st.Mode(), instead); err != nil {
		return "", fmt.Errorf("leads to %s, which %w", target, err)
	}
	return target, nil
}

// notRegular says why a path of mode m cannot be written by a rename (an
// export's file, a backup), and what to do instead, or nil for a regular
// file.
func notRegular(path string, m fs.FileMode, instead string) error {
	kind := ""
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return fmt.Errorf("is a directory: name a file in it, such as %s", filepath.Join(path, "export.csv"))
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	default:
		kind = "not a regular file"
	}
	return fmt.Errorf("is %s: only a regular file is written there, and --force never replaces anything else; %s (> %s)", kind, instead, path)
}

// CheckPath refuses a path an export cannot be written to: a directory,
// or a file in a directory that does not exist; the error says what to do.
func CheckPath(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("is a directory: name a file in it, such as %s", filepath.Join(path, "export.csv"))
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the directory %s does not exist: create it (mkdir -p %s), or write elsewhere", dir, dir)
	case err == nil && !st.IsDir():
		return fmt.Errorf("%s is not a directory: write into a directory", dir)
	}
	// The file is written beside its name, then renamed: the directory
	// must take a new file.
	switch err := unix.Access(dir, unix.W_OK); {
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("%s is on a read-only file system: mount it read-write, or write elsewhere", dir)
	case errors.Is(err, unix.EACCES):
		return fmt.Errorf("the directory %s is not writable by this user: write elsewhere, or ask for write access to it", dir)
	}
	return nil
}

// CreateBeside creates a new, hidden file next to path, for an export to
// be written in and renamed to path once complete, so that a failed export
// never leaves a partial file under the name asked for. Its mode is a
// plain create's (0666 less the umask: os.CreateTemp's 0600 would leave the
// export unreadable to the people it is for).
func CreateBeside(path string) (*os.File, error) {
	for i := 0; ; i++ {
		name := filepath.Join(filepath.Dir(path), fmt.Sprintf("%s%d.%d", besidePrefix(path), os.Getpid(), i))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) || i >= 1000 {
			return f, err
		}
	}
}

// besidePrefix is how the files CreateBeside makes for path begin; the
// writer's process id and a number follow.
func besidePrefix(path string) string { return "." + filepath.Base(path) + "." }

// Leftover is a file an export to the same path left behind when its
// process was killed before it could remove it.
type Leftover struct {
	Name  string
	Bytes int64
}

// RemoveLeftovers removes the files CreateBeside made for path whose
// process is gone (SIGKILL, a crash, a machine that stopped): an export
// still being written by another live process keeps its file. It returns
// what it removed.
func RemoveLeftovers(path string) ([]Leftover, error) {
	dir, prefix := filepath.Dir(path), besidePrefix(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, e := range entries {
		pid, ok := writerOf(e.Name(), prefix)
		if !ok || e.IsDir() || pid == os.Getpid() || alive(pid) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
		out = append(out, Leftover{Name: name, Bytes: info.Size()})
	}
	return out, nil
}

// writerOf reads the process id out of a name CreateBeside made with
// prefix: prefix, the id, a dot and a number.
func writerOf(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	pidText, seq, ok := strings.Cut(rest, ".")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil || pid <= 0 {
		return 0, false
	}
	if _, err := strconv.Atoi(seq); err != nil {
		return 0, false
	}
	return pid, true
}
