package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// refusedOnTheClock is a history whose upstream's Date was an hour behind
// from a minute in, and whose daemon's log holds line once, said two
// minutes in.
func refusedOnTheClock(t *testing.T, line string) *History {
	h := &History{Config: Config{Start: t0, Dir: t.TempDir()}, End: t0.Add(time.Hour),
		Skews: []Interval{{t0.Add(time.Minute), t0.Add(21 * time.Minute)}}, SkewBy: []time.Duration{time.Hour}}
	h.Log = filepath.Join(h.Dir, "daemon.log")
	full := `time=2026-10-25T00:02:00.000Z level=INFO msg="pass failed" region=US err="fetch US page 1: limiter: unavailable: ` + line + `"` + "\n"
	if err := os.WriteFile(h.Log, []byte(full), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheckHoldsARefusalOnTheClockToTheClocks(t *testing.T) {
	const rest = ": nothing is decided on a wrong day; the upstream's Date header, read 0s ago (asked at no quota cost by GET ..., at most once a minute) says so: this host's clock is wrong, set it right (NTP)"
	right := "the limiter's clock disagrees with the upstream's: this host's clock reads 2026-10-25T00:02:00Z, 1h0m1s ahead of the upstream's" + rest
	if f := checkClockSaid(refusedOnTheClock(t, right)); len(f) != 0 {
		t.Fatalf("the clocks said as they were: %q", f)
	}
	for name, c := range map[string]struct{ line, want string }{
		"the way": {strings.Replace(right, "ahead of", "behind", 1), "this host's clock behind the upstream's, whose Date was 1h0m0s behind"},
		"a unit":  {strings.Replace(right, "1h0m1s", "1s", 1), "1s ahead of the upstream's, whose Date was 1h0m0s behind"},
		"the sign": {strings.Replace(right, "1h0m1s ahead of", "-1h0m1s ahead of", 1),
			"-1h0m1s ahead of the upstream's, whose Date was 1h0m0s behind"},
		"the time": {strings.Replace(right, "reads 2026-10-25T00:02:00Z", "reads 2026-10-24T23:02:00Z", 1),
			"this host's clock reads 2026-10-24T23:02:00Z, said at 2026-10-25T00:02:00Z"},
		"the clock and the time traded": {strings.Replace(right, "this host's clock reads 2026-10-25T00:02:00Z", "2026-10-25T00:02:00Z reads this host's clock", 1),
			"no clock, time, gap and way read in it"},
	} {
		f := checkClockSaid(refusedOnTheClock(t, c.line))
		if len(f) != 1 || !strings.Contains(f[0], "1 of 1 refusals on the clock say otherwise than the clocks were: "+c.want) {
			t.Errorf("%s: %q", name, f)
		}
	}
}
