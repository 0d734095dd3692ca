package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// US a page hourly on a default pool of units a day: its passes start
// where the pool holds them until the window holds the pool, and a
// category chart only where it holds its page and a round of the own
// charts after it (US a page, GB, never passed, the four its depth
// asks); paced only, the
// round not held once a plan dropped an own chart, nor after a wrong Date
// or a stalled Redis.
func TestCheckFindsAPassStartedWithoutRoom(t *testing.T) {
	day := func(units int) *History {
		h := history(hourly(24, 1), nil, 1)
		for i := range h.Runs {
			h.Runs[i].Pages = 1
		}
		h.Costs = poolCosts(t, units, "24h")
		return h
	}
	if f := checkRoomAtStart(day(24)); len(f) != 0 {
		t.Errorf("24 pages a day on a pool of 24: %q", f)
	}
	h := day(20)
	if f := checkRoomAtStart(h); len(f) != 1 || !strings.Contains(f[0], "pool default: 4 of 24 chart passes started where the pool did not hold them") ||
		!strings.Contains(f[0], "US at 2026-10-25T20:00:00Z with 0 left of the 1 it needs") {
		t.Errorf("24 pages a day on a pool of 20: %q", f)
	}
	h.NoPace = true
	if f := checkRoomAtStart(h); len(f) != 0 {
		t.Errorf("--pace=false: %q", f)
	}

	withCategory := func(units int) *History {
		h := day(units)
		h.Charts = append(h.Charts, regions.Chart{Code: "GB", Tier: 1, Depth: 200})
		h.Runs = append(h.Runs, Run{Region: "US", Category: "10", Status: "completed", Started: t0.Add(22*time.Hour + 30*time.Minute), Pages: 1})
		return h
	}
	if f := checkRoomAtStart(withCategory(29)); len(f) != 0 {
		t.Errorf("a category chart of a page with 6 left, a round of 5: %q", f)
	}
	h = withCategory(28)
	if f := checkRoomAtStart(h); len(f) != 1 || !strings.Contains(f[0], "1 of 25 chart passes") ||
		!strings.Contains(f[0], "US/10 at 2026-10-25T22:30:00Z with 5 left of the 6 it needs") {
		t.Errorf("a category chart of a page with 5 left, a round of 5: %q", f)
	}
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	const drops = `time=2026-10-25T04:00:00.000Z level=WARN msg="pace: the plan drops what the budget cannot hold beside the entries above it" dropped=1 entries=GB back=0 kept=1
`
	if err := os.WriteFile(h.Log, []byte(drops), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkRoomAtStart(h); len(f) != 0 {
		t.Errorf("a plan dropped GB, an own chart: %q", f)
	}
	const back = `time=2026-10-25T05:00:00.000Z level=INFO msg="pace: the plan takes back entries it dropped" back=1 entries=GB
`
	if err := os.WriteFile(h.Log, []byte(drops+back), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkRoomAtStart(h); len(f) != 1 {
		t.Errorf("GB dropped and taken back before the category chart: %q", f)
	}
	if err := os.WriteFile(h.Log, []byte(strings.ReplaceAll(drops, "dropped=1 entries=GB", `dropped=2 entries="US/10 and 1 more"`)+back), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkRoomAtStart(h); len(f) != 0 {
		t.Errorf("two dropped, one of them perhaps an own chart, one taken back: %q", f)
	}

	h = day(20)
	h.Skews = []Interval{{t0.Add(time.Hour), t0.Add(time.Hour + 20*time.Minute)}}
	if f := checkRoomAtStart(h); len(f) != 0 {
		t.Errorf("a wrong Date within the window: %q", f)
	}
	h = day(20)
	h.Redis, h.Stalls = "redis://", []time.Time{t0.Add(19 * time.Hour)}
	if f := checkRoomAtStart(h); len(f) != 0 {
		t.Errorf("a stalled Redis within the window: %q", f)
	}
}
