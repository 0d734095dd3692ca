package yeardb

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

func TestBuildWritesHourlyRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "day.db")
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := BuildWith(ctx, path, Options{Days: 1, End: end, Regions: []string{"GB", "AU"}}); err != nil {
		t.Fatal(err)
	}
	if err := BuildWith(ctx, path, Options{Days: 1}); err == nil {
		t.Error("a second build over the same file: got nil error, want a refusal")
	}
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs, completed, newest int64
	var entries, calls, videos int
	r := db.Reader()
	if err := r.QueryRow(`SELECT count(*), sum(status = 'completed'), max(started_ms) FROM runs`).Scan(&runs, &completed, &newest); err != nil {
		t.Fatal(err)
	}
	// GB's chart is 77 long (2 pages), AU's 64 (2 pages): 4 calls an hour
	// and one videoCategories.list per region.
	r.QueryRow(`SELECT count(*) FROM trending_entries`).Scan(&entries)
	r.QueryRow(`SELECT count(*) FROM ledger`).Scan(&calls)
	r.QueryRow(`SELECT count(*) FROM videos`).Scan(&videos)
	if runs != 48 || completed != 48 || entries != 24*(77+64) || calls != 24*4+2 {
		t.Errorf("runs %d (%d completed), entries %d, calls %d; want 48, 48, %d, %d", runs, completed, entries, calls, 24*(77+64), 24*4+2)
	}
	if time.UnixMilli(newest).UTC().Truncate(time.Hour) != end {
		t.Errorf("newest run at %s, want in the hour of %s", time.UnixMilli(newest).UTC(), end)
	}
	if videos <= 77+64 {
		t.Errorf("%d videos after a day of moving charts, want new ones beyond the first charts' %d", videos, 77+64)
	}
}

// TestImportsNothingAbove keeps the bench tool below the daemon: it builds
// with the store's writer and the fake upstream's charts, so that the
// packages it measures can change without it, and it never needs them.
func TestImportsNothingAbove(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/ingestworks/ingest/"
	for _, dep := range strings.Fields(string(out)) {
		pkg, ok := strings.CutPrefix(dep, module)
		if !ok {
			continue
		}
		if top, _, _ := strings.Cut(pkg, "/"); slices.Contains([]string{"cmd", "jobs", "pace", "quota", "fetch", "web", "report"}, top) {
			t.Errorf("internal/rig/yeardb depends on %s, a package above it", dep)
		}
	}
}

// TestBuildTracks checks that Track writes an hourly tracking pass: the
// counts of every video the charts showed, 50 a stats call.
func TestBuildTracks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "day.db")
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := BuildWith(ctx, path, Options{Days: 1, End: end, Regions: []string{"GB"}, Track: 7 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenExisting(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var stats, hours, calls, statsCalls, seen int
	r := db.Reader()
	r.QueryRow(`SELECT count(*), count(DISTINCT at_ms) FROM video_stats`).Scan(&stats, &hours)
	r.QueryRow(`SELECT count(*), sum(pool = 'stats') FROM ledger`).Scan(&calls, &statsCalls)
	r.QueryRow(`SELECT count(DISTINCT vid) FROM trending_entries`).Scan(&seen)
	if hours != 24 || stats < 24*77 || stats > 24*seen {
		t.Errorf("%d stats rows at %d times, want a pass an hour of at least GB's 77 videos, at most the %d seen", stats, hours, seen)
	}
	if want := (stats + 49) / 50; statsCalls < want || statsCalls > want+24 {
		t.Errorf("%d stats calls for %d rows, want about one per 50", statsCalls, stats)
	}
}

// TestChartsChurn follows two months of every default chart and checks
// that they churn as real ones do: most videos stay one to seven days, a
// few stay for weeks, and some are on several charts.
func TestChartsChurn(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := newWorld(1, regions.Default, start)
	first, last := map[string]int{}, map[string]int{}
	onCharts := map[string]map[string]bool{}
	const hours = 60 * 24
	for h := range hours {
		for _, region := range regions.Default {
			for _, v := range w.chart(region, h, start.Add(time.Duration(h)*time.Hour)) {
				if _, ok := first[v.ID]; !ok {
					first[v.ID] = h
				}
				last[v.ID] = h
				if onCharts[v.ID] == nil {
					onCharts[v.ID] = map[string]bool{}
				}
				onCharts[v.ID][region] = true
			}
		}
	}
	var stays []int
	several := 0
	for id, f := range first {
		if f > 0 && last[id] < hours-1 { // entered and left within the window
			stays = append(stays, last[id]-f+1)
		}
		if len(onCharts[id]) > 1 {
			several++
		}
	}
	slices.Sort(stays)
	inWeek, weeks := 0, 0
	for _, s := range stays {
		if s >= 24 && s <= 7*24 {
			inWeek++
		}
		if s > 14*24 {
			weeks++
		}
	}
	if len(stays) < 5000 || inWeek*100 < 60*len(stays) || weeks*100 < 2*len(stays) || weeks*100 > 20*len(stays) {
		t.Errorf("%d videos came and went: %d stayed 1-7 days, %d over two weeks; want thousands, most 1-7 days, a few for weeks",
			len(stays), inWeek, weeks)
	}
	if several*100 < 3*len(first) {
		t.Errorf("%d of %d videos on several charts, want some", several, len(first))
	}
}

// TestTextIsVaried writes the text of a few thousand videos and checks
// that it speaks tens of thousands of words in every script the fake
// upstream serves.
func TestTextIsVaried(t *testing.T) {
	t.Parallel()
	w := newWorld(1, regions.Default, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	words := map[string]bool{}
	scripts := map[string]bool{}
	tables := map[string]*unicode.RangeTable{"Latin": unicode.Latin, "Devanagari": unicode.Devanagari,
		"Bengali": unicode.Bengali, "Tamil": unicode.Tamil, "Hangul": unicode.Hangul, "Han": unicode.Han,
		"Katakana": unicode.Katakana, "Hiragana": unicode.Hiragana, "Arabic": unicode.Arabic, "Thai": unicode.Thai}
	for i := range 20000 {
		c := w.newClip(regions.Default[i%len(regions.Default)], time.Time{})
		text := c.v.Title + " " + c.v.Description + " " + strings.Join(c.v.Tags, " ")
		for _, f := range strings.Fields(text) {
			words[f] = true
		}
		for name, tab := range tables {
			if !scripts[name] && strings.IndexFunc(text, func(r rune) bool { return unicode.Is(tab, r) }) >= 0 {
				scripts[name] = true
			}
		}
	}
	if len(words) < 50000 {
		t.Errorf("%d distinct words in 20,000 videos, want tens of thousands", len(words))
	}
	for name := range tables {
		if !scripts[name] {
			t.Errorf("no text in %s", name)
		}
	}
}

// TestPick reads the picks of a day of two charts.
func TestPick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "day.db")
	end := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	if err := BuildWith(ctx, path, Options{Days: 2, End: end, Regions: []string{"US", "GB"}}); err != nil {
		t.Fatal(err)
	}
	p, err := Pick(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Chart) != 200 || p.Busiest == "" || p.Old == "" || p.Rare == "" || p.Words < 1000 ||
		p.End.Truncate(time.Hour) != end || !p.Mid.Before(p.End) {
		t.Errorf("picks %+v, want the US chart of 200, a busiest, an old video, a rare word among thousands, the end %s",
			p, end)
	}
}
