package web

// How a page says a figure, a time or a name to a reader.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

func when(s *string) string {
	if s == nil {
		return "-"
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return *s
	}
	return t.UTC().Format("Jan 2 15:04 UTC")
}

func stampTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("Jan 2 15:04 UTC")
}

// shortNote keeps a run's message short for a table cell.
func shortNote(msg string) string {
	if r := []rune(msg); len(r) > 90 {
		return string(r[:89]) + "…"
	}
	return msg
}

// plural picks the word for n things: 1 hit, 2 hits, 0 hits.
func plural(n int, one, many string) string {
	return plural64(int64(n), one, many)
}

func plural64(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// duration prints an ISO 8601 duration as the upstream sends it (PT22M47S)
// the way a player shows it (22:47, 1:02:03); "live" for P0D, what a live
// broadcast has; anything else as it came.
func duration(iso string) string {
	m := isoDuration.FindStringSubmatch(iso)
	if m == nil || iso == "P" || strings.HasSuffix(iso, "T") {
		return iso
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
	secs := (((n(1)*7+n(2))*24+n(3))*60+n(4))*60 + n(5)
	if secs == 0 {
		return "live"
	}
	h, mnt, sec := secs/3600, secs/60%60, secs%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, mnt, sec)
	}
	return fmt.Sprintf("%d:%02d", mnt, sec)
}

// day is a stamp's day as a page says it: "Nov 17, 2026".
func day(s *string) string {
	if s == nil {
		return "-"
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return *s
	}
	return t.UTC().Format("Jan 2, 2006")
}

// short is a count as a reader takes it in: 27.2M, 950K, 812.
func short(n int64) string {
	return compact(float64(n))
}

// languageName names a language tag in English and, when it differs, in
// the language itself: "Hindi · हिन्दी", "English"; the tag as it is when
// it names no known language.
func languageName(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return tag
	}
	en := display.English.Tags().Name(t)
	if en == "" {
		return tag
	}
	if self := display.Self.Name(t); self != "" && !strings.EqualFold(self, en) {
		return en + " · " + self
	}
	return en
}

// regionName is a region's name in English: United States.
func regionName(code string) string {
	r, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if n := display.English.Regions().Name(r); n != "" {
		return n
	}
	return code
}

// clip is a text on one line, cut at a word to at most n runes with "…":
// a preview's description.
func clip(text string, n int) string {
	t := strings.Join(strings.Fields(text), " ")
	r := []rune(t)
	if len(r) <= n {
		return t
	}
	cut := strings.TrimRightFunc(string(r[:n-1]), func(c rune) bool { return c != ' ' })
	if cut == "" {
		cut = string(r[:n-1])
	}
	return strings.TrimSpace(cut) + "…"
}
