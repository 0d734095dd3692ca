package sim

import (
	"strings"
	"testing"
	"time"
)

func TestCheckFindsARefillThatForgotCalls(t *testing.T) {
	h := history(hourly(24, 1), nil, 5)
	at := t0.Add(23*time.Hour + 30*time.Minute)
	h.Looks = []Look{{At: at, Used: map[string]int64{"default": 120}}}
	if f := checkRefilled(h); len(f) != 0 {
		t.Fatalf("the limiter counted the window's 24 passes: %q", f)
	}
	h.Looks[0].Used["default"] = 125 // a call admitted, on the wire
	if f := checkRefilled(h); len(f) != 0 {
		t.Fatalf("the limiter counted a call in flight more: %q", f)
	}
	h.Looks[0].Used["default"] = 100
	f := checkRefilled(h)
	if len(f) != 1 || !strings.Contains(f[0], "at 2026-10-25T23:30:00Z, after the Redis lost its data, the limiter counted 100 units of default in its window; the upstream charged 120") {
		t.Errorf("the limiter forgot four passes: %q", f)
	}
	h.Looks[0].At = at.Add(2 * time.Hour) // the first two passes left the window
	h.Looks[0].Used["default"] = 110
	if f := checkRefilled(h); len(f) != 0 {
		t.Errorf("the window slid past two passes: %q", f)
	}
}
