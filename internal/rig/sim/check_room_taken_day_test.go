package sim

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// withoutDay is c with no calendar day on any pool.
func withoutDay(c *ingest.Costs) *ingest.Costs {
	for i := range c.Pools {
		c.Pools[i].Day = nil
	}
	return c
}

// A chart declined at its slot for want of room waits for room its pool's
// day has too: where the day binds, a window that frees room is no room,
// and the day's reset is. US a page hourly on a default pool of 2 units a
// half hour; declined at its slot of 4h, the window frees room at 4:10.
func TestCheckHoldsASlotDeclinedForRoomToTheDay(t *testing.T) {
	room := func(c *ingest.Costs, slot time.Time) []string {
		h := history(append(hourly(4, 1), hourly(24, 1)[5:]...), nil, 1)
		h.Costs, h.TrackFor = c, 0
		if end := slot.Add(2 * time.Hour); end.After(h.End) {
			h.End = end // the history lives past the slot's next
		}
		for i := range h.Runs {
			h.Runs[i].Pages = 1
		}
		for _, m := range []float64{220, 230} {
			at := t0.Add(time.Duration(m * float64(time.Minute)))
			h.Calls = append(h.Calls, Call{At: at, Path: "/youtube/v3/videos"})
			h.Ledger = append(h.Ledger, Entry{Pool: "default", Units: 1, At: at})
		}
		slices.SortFunc(h.Calls, func(a, b Call) int { return a.At.Compare(b.At) })
		for i := range h.Calls {
			h.Calls[i].Charged = map[string]int64{"default": int64(i + 1)}
		}
		h.Log = filepath.Join(t.TempDir(), "daemon.log")
		log := `time=` + slot.Format("2006-01-02T15:04:05.000Z") + ` level=INFO msg="pace: slot declined" entry=US slot=` + slot.Format(time.RFC3339) + ` reason="no room" last_pass_ago=1h0m0s next=` + slot.Add(time.Hour).Format(time.RFC3339) + "\n"
		if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		return checkRoomTaken(h)
	}
	at4 := t0.Add(4 * time.Hour)
	if f := room(withoutDay(poolCosts(t, 2, "30m")), at4); len(f) != 1 || !strings.Contains(f[0], "from 04:10:00") {
		t.Errorf("no day: the window freed room at 4:10, untaken to the next slot: %q", f)
	}
	// a day of 2 units (UTC), spent in its first hour: the window's room
	// at 4:10 is none
	if f := room(poolCosts(t, 2, "30m"), at4); len(f) != 0 {
		t.Errorf("the day spent since 1:00: the window's room is no room: %q", f)
	}
	// declined at 23:40 with the day spent, the reset at midnight frees it
	// and US does not pass before its next slot
	late := t0.Add(23*time.Hour + 40*time.Minute)
	if f := room(poolCosts(t, 2, "30m"), late); len(f) != 1 || !strings.Contains(f[0], "from 00:00:01") {
		t.Errorf("the day's reset frees room at midnight, untaken to the next slot: %q", f)
	}
}

// A chart the plan stretched while a second process spent on the key
// stays stretched for the default pool's window after it left: the plan
// counts what it spent over the pool's last window as going on. A gap of
// six hours an hour after a spell is held to the spell's bound while the
// window (6h) still holds the spell, and to the chart's own once it does
// not (30m).
func TestCheckHoldsAGapToASpellForAWindowAfterIt(t *testing.T) {
	gap := func(window string) string {
		h := history(hourly(24, 1), nil, 1)
		h.Costs = poolCosts(t, 100, window)
		h.Joins = []Join{{Interval: Interval{t0.Add(30 * time.Minute), t0.Add(time.Hour)}, Region: "HU"}}
		starts := []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour), t0.Add(8 * time.Hour)}
		h.End = t0.Add(9 * time.Hour)
		return checkGaps(h, "US", starts, 2*time.Hour, time.Hour, 7*time.Hour, "held")
	}
	if f := gap("6h"); f != "" {
		t.Errorf("a gap within the pool's window after the spell: %q", f)
	}
	if f := gap("30m"); !strings.Contains(f, "US: no pass from 2026-10-25T02:00:00Z to 2026-10-25T08:00:00Z") {
		t.Errorf("a gap past the pool's window after the spell: %q", f)
	}
}
