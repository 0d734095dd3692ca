package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// 3. Logs: run --once says one line at info; every JSON line parses with no
// key twice; durations are seconds; --log-level chooses.
func TestLogsAreQuietAndWellFormed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--log-format", "json")
	lines := jsonLines(t, res.stderr)
	if len(lines) != 1 || lines[0]["msg"] != "run --once" || lines[0]["completed"] != float64(8) {
		t.Errorf("run --once at info: want one summary line, got %d:\n%s", len(lines), res.stderr)
	}
	res = h.mustRun(0, "run", "--once", "--log-format", "json", "--log-level", "debug", "--regions", "US")
	passes := 0
	for _, l := range jsonLines(t, res.stderr) {
		if l["msg"] != "pass" {
			continue
		}
		passes++
		d, ok := l["duration"].(float64)
		if !ok || d <= 0 || d > 120 {
			t.Errorf("pass duration %v: want seconds as a number", l["duration"])
		}
	}
	if passes != 1 {
		t.Errorf("--log-level debug: %d pass lines, want 1:\n%s", passes, res.stderr)
	}
	h.set("INGEST_LOG_LEVEL", "loud")
	if res := h.run("run", "--once"); res.code != 2 || !strings.Contains(res.stderr, "INGEST_LOG_LEVEL") {
		t.Errorf("bad INGEST_LOG_LEVEL: want exit 2 naming it, got %s", res)
	}
}

// jsonLines parses every stderr line as one JSON object, failing on a key
// that appears twice (encoding/json would keep the last silently).
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if line == "" {
			continue
		}
		if err := noDuplicateKeys(line); err != nil {
			t.Errorf("log line %s: %v", line, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("log line is not JSON: %q", line)
			continue
		}
		out = append(out, m)
	}
	return out
}

func noDuplicateKeys(line string) error {
	dec := json.NewDecoder(strings.NewReader(line))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			keys := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if keys[k.(string)] {
					return fmt.Errorf("key %q twice", k)
				}
				keys[k.(string)] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	return walk()
}

// TestReachableAgainOnlyAfterAnOutageSeen: a run that rode out a Redis
// outage unmetered leaves calls in the ledger; the next run, on a Redis
// that answers from its start, writes them back without saying the limiter
// is reachable again, since it never saw it unreachable.
func TestReachableAgainOnlyAfterAnOutageSeen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rs := h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	rs.Stop()
	if res := h.mustRun(0, "run", "--once", "--regions", "GB"); !strings.Contains(res.stderr, "quota limiter unreachable") {
		t.Fatalf("a run with Redis stopped does not say the limiter is unreachable:\n%s", res)
	}
	rs.Restart(t)
	res := h.mustRun(0, "run", "--once", "--regions", "DE")
	if strings.Contains(res.stderr, "reachable again") {
		t.Errorf("a run that never saw the outage says the limiter is reachable again:\n%s", res)
	}
}
