package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFindsAPlanThatChangedNothingSaidToTakeBack(t *testing.T) {
	said := func(log string) []string {
		h := history(hourly(24, 1), hourly(24, 60), 1)
		h.Log = filepath.Join(t.TempDir(), "daemon.log")
		if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		return checkDropsSaid(h)
	}
	const drops = `time=2026-10-25T04:00:00.000Z level=WARN msg="pace: the plan drops what the budget cannot hold beside the entries above it" dropped=2 entries=BR,IN back=0 kept=6
`
	const back = `time=2026-10-25T09:00:00.000Z level=INFO msg="pace: the plan takes back entries it dropped" back=1 entries=IN
`
	if f := said(drops + back); len(f) != 0 {
		t.Errorf("BR and IN dropped, IN taken back: %q", f)
	}
	if f := said(back); len(f) != 1 || !strings.Contains(f[0], "takes back IN, which no line before said it dropped") {
		t.Errorf("IN taken back, never dropped: %q", f)
	}
	const nothing = `time=2026-10-25T09:00:00.000Z level=INFO msg="pace: the plan takes back entries it dropped" back=0 entries=""
`
	if f := said(drops + nothing); len(f) != 1 || !strings.Contains(f[0], "at 2026-10-25T09:00:00.000Z the pacer said the plan takes back no entry") {
		t.Errorf("a plan that changed nothing said to take back: %q", f)
	}
	const many = `time=2026-10-25T04:00:00.000Z level=WARN msg="pace: the plan drops what the budget cannot hold beside the entries above it" dropped=10 entries="AU,BR,CA,DE,FR,GB,IN,JP and 2 more" back=0 kept=0
`
	if f := said(many + strings.ReplaceAll(back, "entries=IN", "entries=US")); len(f) != 0 {
		t.Errorf("US taken back, dropped past the names the line gave: %q", f)
	}
	const again = `time=2026-10-25T12:00:00.000Z level=WARN msg="pace: the plan drops what the budget cannot hold beside the entries above it" dropped=1 entries=IN back=0 kept=7
time=2026-10-25T13:00:00.000Z level=INFO msg="pace: the plan takes back entries it dropped" back=1 entries=IN
`
	us := strings.ReplaceAll(drops+back+again, "IN", "US")
	if f := said(us); len(f) != 1 || !strings.Contains(f[0], "takes back US, taken back at 2026-10-25T09:00:00Z, within the pools' longest window (24h0m0s)") {
		t.Errorf("US taken back at 9:00, dropped at 12:00, taken back at 13:00: %q", f)
	}
	if f := said(drops + back + again); len(f) != 0 {
		t.Errorf("IN, no chart of the daemon's own, taken back twice: %q", f)
	}
	if f := said(strings.ReplaceAll(drops+back+strings.ReplaceAll(again, "2026-10-25T1", "2026-10-26T1"), "IN", "US")); len(f) != 0 {
		t.Errorf("US taken back at 9:00, dropped the next day at 12:00, taken back at 13:00: %q", f)
	}
}
