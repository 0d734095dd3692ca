package sim

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// logKey is an attribute's key as the house writes one: a constant, lower
// case word or words joined by underscores (ingest.LogRegion's region,
// units, retry_at), a group's name before a dot.
var logKey = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)

// checkLogKeys: every attribute of every line of the daemon's log has a
// constant key (STYLE's log/slog with constant attribute keys, which
// docs/operations.md's log lines are read by: region=, status=, err=).
// A call that passes a value where its key goes, or one argument short,
// writes the value as the key (region's code, a signal's name) or
// slog's !BADKEY: the line no longer says what it is read for.
func checkLogKeys(h *History) []string {
	if h.Log == "" {
		return nil
	}
	data, err := os.ReadFile(h.Log)
	if err != nil {
		return []string{fmt.Sprintf("the daemon's log: %v", err)}
	}
	var bad []string
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" {
			continue
		}
		for _, key := range logfmtKeys(line) {
			if !logKey.MatchString(key) {
				n++
				if len(bad) < 3 {
					bad = append(bad, fmt.Sprintf("%q in %s", key, cut(line)))
				}
				break
			}
		}
	}
	if n == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d lines of the daemon's log have a key that is no constant word: %s", n, strings.Join(bad, "; "))}
}

// logfmtKeys is the keys of a line slog's text handler wrote: key=value
// pairs apart by spaces, a key or a value quoted when it needs it.
func logfmtKeys(line string) []string {
	var keys []string
	for i := 0; i < len(line); {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i >= len(line) {
			break
		}
		key, next := logfmtToken(line, i, '=')
		keys = append(keys, key)
		if next >= len(line) || line[next] != '=' {
			break
		}
		_, i = logfmtToken(line, next+1, ' ')
	}
	return keys
}

// logfmtToken reads a token of line from i, quoted or up to stop, and
// returns it (unquoted as written, its quotes kept off) and where it
// ended.
func logfmtToken(line string, i int, stop byte) (string, int) {
	if i < len(line) && line[i] == '"' {
		var b strings.Builder
		for j := i + 1; j < len(line); j++ {
			switch line[j] {
			case '\\':
				if j+1 < len(line) {
					j++
					b.WriteByte(line[j])
				}
			case '"':
				return b.String(), j + 1
			default:
				b.WriteByte(line[j])
			}
		}
		return b.String(), len(line)
	}
	j := i
	for j < len(line) && line[j] != stop && line[j] != ' ' {
		j++
	}
	return line[i:j], j
}
