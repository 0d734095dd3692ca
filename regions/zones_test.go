package regions

import (
	"testing"
	"time"
)

// Every region of the built-in catalogue has its own zone, and a day of
// a region is its own: 02:00 UTC is the evening before in New York and
// the same morning in Tokyo.
func TestEveryRegionHasAZone(t *testing.T) {
	for _, r := range Builtin {
		if _, ok := locations[r.Code]; !ok {
			t.Errorf("%s (%s) has no zone", r.Code, r.Name)
		}
	}
	if len(zones) != len(Builtin) {
		t.Errorf("%d zones for %d regions", len(zones), len(Builtin))
	}
	at := time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)
	for code, want := range map[string]string{"US": "2026-11-20", "JP": "2026-11-21", "GB": "2026-11-21", "BR": "2026-11-20", "XX": "2026-11-21"} {
		if got := at.In(Zone(code)).Format(time.DateOnly); got != want {
			t.Errorf("%s: %s, want %s", code, got, want)
		}
	}
}
