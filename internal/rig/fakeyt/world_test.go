package fakeyt

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ingestworks/ingest/regions"
)

// chartItems pages through a region's chart and returns its items and the
// size of each page.
func chartItems(t *testing.T, fx *fixture, region string) ([]map[string]any, []int) {
	t.Helper()
	var items []map[string]any
	var sizes []int
	token := ""
	for {
		status, b := fx.get(t, "/youtube/v3/videos", chartQuery(region, token))
		if status != 200 {
			t.Fatalf("%s: status %d: %s", region, status, b)
		}
		l := decode(t, b)
		items = append(items, l.Items...)
		sizes = append(sizes, len(l.Items))
		if token = l.NextPageToken; token == "" {
			return items, sizes
		}
	}
}

func TestWorldCharts(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, region := range ExtraRegions {
		items, sizes := chartItems(t, fx, region)
		if len(items) != extraLengths[region] {
			t.Errorf("%s: %d items, want %d", region, len(items), extraLengths[region])
		}
		if last := sizes[len(sizes)-1]; (region == "JP" || region == "TH") && last != 49 {
			t.Errorf("%s: last page holds %d items, want 49", region, last)
		}
	}
}

// TestRealTextShapes checks that the shapes of real chart text reach the
// wire as written: emoji glued to words, U+FE0F, ZWJ, U+095C, text without
// spaces, P0D, items without tags, a long description.
func TestRealTextShapes(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var all []map[string]any
	for _, region := range append([]string{"IN"}, ExtraRegions...) {
		items, _ := chartItems(t, fx, region)
		all = append(all, items...)
	}
	found := map[string]bool{}
	for _, it := range all {
		sn := it["snippet"].(map[string]any)
		title, desc := sn["title"].(string), sn["description"].(string)
		cd := it["contentDetails"].(map[string]any)
		for name, ok := range map[string]bool{
			"emoji past U+1F900 glued to a word": strings.Contains(title, "Home🤴") || strings.Contains(title, "Crore🤑"),
			"U+FE0F before a word":               strings.Contains(title, "❤\uFE0F"),
			"ZWJ sequence":                       strings.Contains(title, "\u200D"),
			"nukta as U+095C":                    strings.ContainsRune(title, 0x095C),
			"japanese":                           strings.Contains(title, "焼鳥屋"),
			"thai":                               strings.Contains(title, "หมาป่า"),
			"arabic":                             strings.Contains(title, "مجنون🤯"),
			"tamil":                              strings.Contains(title, "தமிழ்"),
			"korean":                             strings.Contains(title, "서울"),
			"chinese":                            strings.Contains(title, "台南"),
			"live or upcoming (P0D)":             cd["duration"] == "P0D",
			"no tags":                            sn["tags"] == nil,
			"description over 2,000 characters":  utf8.RuneCountInString(desc) > 2000,
		} {
			if ok {
				found[name] = true
			}
		}
	}
	for _, name := range []string{"emoji past U+1F900 glued to a word", "U+FE0F before a word", "ZWJ sequence",
		"nukta as U+095C", "japanese", "thai", "arabic", "tamil", "korean", "chinese", "live or upcoming (P0D)",
		"no tags", "description over 2,000 characters"} {
		if !found[name] {
			t.Errorf("no chart item has %s", name)
		}
	}
}

// TestShapesKeepChartLengths: the default regions keep their lengths.
func TestShapesKeepChartLengths(t *testing.T) {
	t.Parallel()
	f := New()
	for _, r := range regions.Default {
		if got := f.ChartLength(r); got != ChartLengths[r] {
			t.Errorf("%s chart = %d, want %d", r, got, ChartLengths[r])
		}
	}
	var live, blocked, noStats int
	for _, s := range shapes {
		if s.live != "" {
			live++
		}
		if len(s.blocked) > 0 {
			blocked++
		}
		if s.noStats {
			noStats++
		}
	}
	if live == 0 || blocked == 0 || noStats == 0 {
		t.Errorf("shapes: %d live, %d restricted, %d without statistics; want some of each", live, blocked, noStats)
	}
}
