package termtext

import (
	"strings"
	"testing"
)

func TestFill(t *testing.T) {
	t.Parallel()
	in := `one two three four
five six

  kept   as written
	and this
a longwordthatdoesnotfit end`
	want := "one two\nthree four\nfive six\n\n  kept   as written\n\tand this\na\nlongwordthatdoesnotfit\nend"
	if got := Fill(in, 10); got != want {
		t.Errorf("Fill:\ngot  %q\nwant %q", got, want)
	}
	if got := Fill("é é é", 3); got != "é é\né" {
		t.Errorf("Fill counts runes, not bytes: got %q", got)
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567",
		-123: "-123", -123456: "-123,456", -1234567: "-1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		counts []int64
		width  int
		want   string
	}{
		{"none", nil, 10, ""},
		{"flat", []int64{5, 5, 5}, 10, "▁▁▁"},
		{"rising", []int64{0, 1, 2, 3, 4, 5, 6, 7}, 10, "▁▂▃▄▅▆▇█"},
		// Each character is the last count of its share: 1, 3, 5, 7, scaled 1 to 7.
		{"narrowed", []int64{0, 1, 2, 3, 4, 5, 6, 7}, 4, "▁▃▅█"},
	} {
		got := Sparkline(tc.counts, tc.width)
		if got != tc.want || len([]rune(got)) > tc.width {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := Sparkline(make([]int64, 1000), 60); strings.Count(got, "▁") != 60 {
		t.Errorf("1000 counts in 60: got %d characters", len([]rune(got)))
	}
}
