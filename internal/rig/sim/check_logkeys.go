package sim

// The log's attribute keys. Every part logs with the house's constant
// keys (ingest's logkeys.go: region, op, units...), so that a query over
// the logs finds the same key whoever wrote the line. A call to the
// logger whose arguments are out of order leaves a value where a key
// goes (videos.list=op), or slog's !BADKEY for an odd one: the line is
// still written, and nothing that counts sees it.

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// logKey is what a key of the daemon's log looks like: a plain lower-case
// identifier (the house logs no groups).
var logKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkLogKeys: every attribute key in the logs of the daemon and of the
// processes beside it is a plain identifier.
func checkLogKeys(h *History) []string {
	var bad []string
	err := eachLogLine([]string{h.Log, filepath.Join(h.Dir, "beside.log"), filepath.Join(h.Dir, "backfill.log")}, func(file, line string) {
		for _, k := range logKeys(line) {
			if !logKey.MatchString(k) {
				bad = append(bad, fmt.Sprintf("key %q in %s: %s", k, file, cut(line)))
			}
		}
	})
	if err != nil {
		return []string{err.Error()}
	}
	if len(bad) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d log attributes have a key that is no plain identifier (a value, or !BADKEY, where a key goes): %s", len(bad), firstFew(bad))}
}

// logKeys is the keys of one line of slog's text form: key=value pairs
// apart by a space, a key or a value quoted when it holds a space, an
// equals sign or a quote.
func logKeys(line string) []string {
	var keys []string
	for rest := line; rest != ""; {
		k, after, ok := logToken(rest, '=')
		if !ok {
			return keys
		}
		keys = append(keys, k)
		_, rest, _ = logToken(after, ' ')
	}
	return keys
}

// logToken reads one token of s up to the byte end (a quoted token up to
// its closing quote), and what follows that byte.
func logToken(s string, end byte) (tok, rest string, ok bool) {
	if strings.HasPrefix(s, `"`) {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				tok = s[:i+1]
				s = s[i+1:]
				if len(s) > 0 && s[0] == end {
					return tok, s[1:], true
				}
				return tok, "", len(s) == 0 && end == ' '
			}
		}
		return s, "", false
	}
	i := strings.IndexByte(s, end)
	if i < 0 {
		return s, "", end == ' '
	}
	return s[:i], s[i+1:], true
}

// eachLogLine calls f with each line of each of files, and the file's
// base name; a file that is not there is a process the history never ran.
func eachLogLine(files []string, f func(file, line string)) error {
	for _, file := range files {
		r, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			f(filepath.Base(file), sc.Text())
		}
		err = sc.Err()
		r.Close()
		if err != nil {
			return fmt.Errorf("read %s: %v", file, err)
		}
	}
	return nil
}
