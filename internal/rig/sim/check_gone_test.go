package sim

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFindsAVideoDeletedAsGoneThatTheUpstreamHad(t *testing.T) {
	forgot := []Gone{{At: t0, ID: "v1"}, {At: t0.Add(24 * time.Hour), ID: "v2"}}
	for _, c := range []struct {
		name  string
		tombs map[string]time.Time
		want  string
	}{
		{"the forgotten, after", map[string]time.Time{"v1": t0.Add(21 * 24 * time.Hour), "v2": t0.Add(22 * 24 * time.Hour)}, ""},
		{"none", nil, ""},
		{"one still there", map[string]time.Time{"v1": t0.Add(21 * 24 * time.Hour), "v9": t0.Add(21 * 24 * time.Hour)},
			"1 videos were deleted as gone that the upstream still returned: v9 at "},
		{"before it was forgotten", map[string]time.Time{"v2": t0.Add(time.Hour)}, "v2 at "},
	} {
		f := checkGoneForgotten(&History{Forgotten: forgot, Tombstones: c.tombs})
		if c.want == "" && len(f) != 0 || c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
}
