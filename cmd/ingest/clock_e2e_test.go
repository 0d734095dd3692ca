package main

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"
)

// TestClockSkewLines: a run keeps the upstream's time from its answers'
// Date header; report (text and --json) and check say how far this host's
// clock is from it; with the upstream's clock an hour ahead, check fails
// naming the clock.
func TestClockSkewLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetClock(func() time.Time { return time.Now().Add(-3 * time.Second) })
	h.mustRun(0, "run", "--once", "--regions", "US")
	var rep struct {
		Clock *struct {
			Skew float64 `json:"skew_seconds"`
			Seen string  `json:"seen_at"`
		} `json:"upstream_clock"`
	}
	out := h.mustRun(0, "report", "--json")
	if err := json.Unmarshal([]byte(out.stdout), &rep); err != nil || rep.Clock == nil || rep.Clock.Skew > -2 || rep.Clock.Skew < -5 {
		t.Fatalf("report --json upstream_clock: %+v (%v); want a skew of about -3 s\n%s", rep.Clock, err, out.stdout)
	}
	text := h.mustRun(0, "report").stdout
	line := regexp.MustCompile(`(?m)^Upstream clock: this host's clock is \d+s ahead of the upstream's.*$`).FindString(text)
	check := h.mustRun(0, "check")
	clockLine := regexp.MustCompile(`(?m)^ok +clock +.*$`).FindString(check.stdout)
	t.Logf("upstream 3 s behind: report %q; check %q; report --json skew_seconds %v", line, clockLine, rep.Clock.Skew)
	if line == "" || clockLine == "" {
		t.Fatalf("report or check does not give the clock line:\n%s\n%s", text, check.stdout)
	}
	h.fake.SetClock(func() time.Time { return time.Now().Add(time.Hour) })
	check = h.mustRun(1, "check")
	failed := regexp.MustCompile(`(?m)^FAIL +clock +.*$`).FindString(check.stdout)
	t.Logf("upstream 1 h ahead: check %q", failed)
	if failed == "" {
		t.Fatalf("check with the upstream's clock an hour ahead does not fail the clock:\n%s", check)
	}
}
