package report

import (
	"strings"
	"testing"
	"time"
)

func TestShortNoteKeepsTheReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"quota refused videos.list", "quota refused videos.list"},
		{`categories: fetch US videoCategories.list: gave up after 4 attempts: Get "http://127.0.0.1:1/youtube/v3/videoCategories?alt=json&regionCode=US": dial tcp 127.0.0.1:1: connect: connection refused`,
			"…gave up after 4 attempts: dial tcp 127.0.0.1:1: connect: connection refused"},
	} {
		got := shortNote(tc.in)
		if got != tc.want && !(len([]rune(got)) <= maxNote && strings.HasSuffix(got, "connection refused")) {
			t.Errorf("shortNote(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "http://") || len([]rune(got)) > maxNote {
			t.Errorf("shortNote(%q) = %q: a URL or longer than %d", tc.in, got, maxNote)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{24 * time.Hour: "24h", 90 * time.Minute: "1h30m", time.Minute: "1m", 1500 * time.Millisecond: "1.5s"} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
	}
}
