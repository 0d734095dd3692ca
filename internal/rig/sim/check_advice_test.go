package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFindsAClockRefusalThatSaysNotWhatItRestsOn(t *testing.T) {
	h := history(hourly(3, 1), nil, 1)
	h.Dir = t.TempDir()
	h.Log = filepath.Join(h.Dir, "daemon.log")
	said := `time=2026-10-25T00:00:00.000Z level=ERROR msg=pass region=IN status=failed err="page 1: fetch IN videos.list: limiter: unavailable: the limiter's clock disagrees with the upstream's: this host's clock reads 2026-10-25T01:00:00Z, 1h0m0s ahead of the upstream's: nothing is decided on a wrong day; the upstream's Date header, read 0s ago (asked at no quota cost) says so: this host's clock is wrong, set it right (NTP)"
time=2026-10-25T00:01:00.000Z level=INFO msg=pass region=US status=completed
`
	if err := os.WriteFile(h.Log, []byte(said), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkClockAdvice(h); len(f) != 0 {
		t.Fatalf("a refusal that names the Date header it rests on: %q", f)
	}
	bare := `time=2026-10-25T00:02:00.000Z level=ERROR msg=pass region=GB status=failed err="limiter: unavailable: the limiter's clock disagrees with the upstream's: this host's clock reads 2026-10-25T01:02:00Z, 1h0m0s ahead of the upstream's: nothing is decided on a wrong day; set that clock right (NTP)"
`
	if err := os.WriteFile(filepath.Join(h.Dir, "beside.log"), []byte(bare), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkClockAdvice(h); len(f) != 1 || !strings.Contains(f[0], "1 of 2 refusals on the clock do not say what the upstream's time rests on: beside.log: ") {
		t.Errorf("a refusal beside that says only to set that clock right: %q", f)
	}
}
