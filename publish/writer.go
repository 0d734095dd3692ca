package publish

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ManifestName is the directory's list of the files a publish wrote, one
// a line: the files the next publish may remove, and no others, so that
// what else the directory holds (a host's own files) is left alone.
const ManifestName = ".ingest-published"

// tempSuffix marks a file staged beside its name; tempName finds the ones
// a publish that stopped half way left.
const tempSuffix = ".publish-"

var tempName = regexp.MustCompile(`^\..*\.publish-[0-9]+$`)

// writer stages and renames the files of one publish in dir.
type writer struct {
	dir   string
	temps []string
	// renamed, when set, is told each file renamed into place, relative
	// to dir (tests watch the order with it).
	renamed func(file string)
}

// target is file's place on disk.
func (w *writer) target(file string) string {
	return filepath.Join(w.dir, filepath.FromSlash(file))
}

// stage writes body beside file and syncs it, returning where; "" when
// file holds body already, so that it is not written again.
func (w *writer) stage(file string, body []byte) (string, error) {
	to := w.target(file)
	if old, err := os.ReadFile(to); err == nil && bytes.Equal(old, body) {
		return "", nil
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return "", fmt.Errorf("publish %s: %w", file, err)
	}
	f, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+tempSuffix+"*")
	if err != nil {
		return "", fmt.Errorf("publish %s: %w", file, err)
	}
	w.temps = append(w.temps, f.Name())
	_, err = f.Write(body)
	err = errors.Join(err, f.Chmod(0o644), f.Sync(), f.Close())
	if err != nil {
		return "", fmt.Errorf("publish %s: %w", file, err)
	}
	return f.Name(), nil
}

// commit renames the staged files into place in the site's order, then
// removes what the previous publish wrote and this one did not, the
// manifest naming both until the last step so that a publish stopped in
// between still removes them next time.
func (w *writer) commit(pages []*page, res Result) (Result, error) {
	slices.SortStableFunc(pages, func(a, b *page) int {
		if a.order != b.order {
			return a.order - b.order
		}
		return strings.Compare(a.file, b.file)
	})
	old, err := w.readManifest()
	if err != nil {
		return res, err
	}
	now := make([]string, 0, len(pages))
	current := map[string]bool{}
	for _, pg := range pages {
		now = append(now, pg.file)
		current[pg.file] = true
		res.Files++
		res.Bytes += pg.size
	}
	if err := w.writeManifest(union(old, now)); err != nil {
		return res, err
	}
	for _, pg := range pages {
		if pg.temp == "" {
			continue
		}
		if err := w.rename(pg.temp, pg.file); err != nil {
			return res, err
		}
		res.Written++
		res.WrittenBytes += pg.size
	}
	for _, f := range old {
		if !current[f] {
			if err := w.remove(f); err != nil {
				return res, err
			}
			res.Removed++
		}
	}
	return res, w.writeManifest(now)
}

// commitPart renames a partial publish's staged files into place in the
// site's order and removes the files of its pages gone; the manifest names
// the new files before they are renamed (so that a publish stopped half
// way still removes them later when no page links them) and the files gone
// after they are removed. Files and Bytes are the directory's files after.
func (w *writer) commitPart(pages []*page, old []string, res Result) (Result, error) {
	slices.SortStableFunc(pages, func(a, b *page) int {
		if a.order != b.order {
			return a.order - b.order
		}
		return strings.Compare(a.file, b.file)
	})
	var added []string
	gone := map[string]bool{}
	for _, pg := range pages {
		if pg.gone {
			gone[pg.file] = true
		} else {
			added = append(added, pg.file)
		}
	}
	all := union(old, added)
	if err := w.writeManifest(all); err != nil {
		return res, err
	}
	for _, pg := range pages {
		if pg.gone || pg.temp == "" {
			continue
		}
		if err := w.rename(pg.temp, pg.file); err != nil {
			return res, err
		}
		res.Written++
		res.WrittenBytes += pg.size
	}
	now := make([]string, 0, len(all))
	for _, f := range all {
		if gone[f] {
			if err := w.remove(f); err != nil {
				return res, err
			}
			res.Removed++
			continue
		}
		now = append(now, f)
		if fi, err := os.Stat(w.target(f)); err == nil {
			res.Files++
			res.Bytes += fi.Size()
		}
	}
	return res, w.writeManifest(now)
}

// rename puts temp in file's place and syncs the directory, so that the
// name holds across a crash before the pages that link it are renamed.
func (w *writer) rename(temp, file string) error {
	to := w.target(file)
	if err := os.Rename(temp, to); err != nil {
		return fmt.Errorf("publish %s: %w", file, err)
	}
	w.temps = slices.DeleteFunc(w.temps, func(t string) bool { return t == temp })
	if err := syncDir(filepath.Dir(to)); err != nil {
		return fmt.Errorf("publish %s: %w", file, err)
	}
	if w.renamed != nil {
		w.renamed(file)
	}
	return nil
}

// remove removes a file no page links, and the directories it leaves
// empty up to dir.
func (w *writer) remove(file string) error {
	to := w.target(file)
	if err := os.Remove(to); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("publish: remove %s: %w", file, err)
	}
	for d := filepath.Dir(to); d != filepath.Clean(w.dir) && strings.HasPrefix(d, filepath.Clean(w.dir)); d = filepath.Dir(d) {
		if os.Remove(d) != nil { // not empty: something else lives there
			break
		}
	}
	return nil
}

// readManifest is the files the previous publish wrote; none for a
// directory never published into.
func (w *writer) readManifest() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(w.dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	var files []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := sc.Text(); f != "" && filepath.IsLocal(filepath.FromSlash(f)) && f != ManifestName {
			files = append(files, f)
		}
	}
	return files, nil
}

// writeManifest replaces the manifest with files, as any file.
func (w *writer) writeManifest(files []string) error {
	var b bytes.Buffer
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	temp, err := w.stage(ManifestName, b.Bytes())
	if err != nil || temp == "" {
		return err
	}
	return w.rename(temp, ManifestName)
}

// sweepTemps removes the staged files a publish stopped half way left.
func (w *writer) sweepTemps() error {
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && tempName.MatchString(d.Name()) {
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

// dropTemps removes what this publish staged and did not rename.
func (w *writer) dropTemps() {
	for _, t := range w.temps {
		os.Remove(t)
	}
	w.temps = nil
}

// union is a's files and b's, each once, a's order first.
func union(a, b []string) []string {
	out := slices.Clone(a)
	in := map[string]bool{}
	for _, f := range a {
		in[f] = true
	}
	for _, f := range b {
		if !in[f] {
			out = append(out, f)
		}
	}
	return out
}

// syncDir syncs a directory, so that a rename in it lasts.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
