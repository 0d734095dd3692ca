package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// langVid is a video titled "derby" with the upstream's two language tags.
func langVid(id, audio, text string) ingest.Video {
	v := vid(id, "derby "+id)
	v.AudioLanguage, v.Language = audio, text
	return v
}

// A chart and a search kept to one language keep the videos either of
// whose tags is that language or a narrower form of it, at their ranks in
// the whole chart.
func TestLanguageFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		id := run(t, db, ingest.Trending, "IN", t0, page(ingest.Trending, "IN", 1, t0,
			langVid("a", "en", "en"), langVid("b", "hi", ""), langVid("c", "", ""),
			langVid("d", "zxx", "hi-IN"), langVid("e", "HI-Latn", "en"), langVid("f", "hin", "")))
		if err := db.FinishRun(ctx, id, ingest.RunEnd{Status: ingest.StatusCompleted, At: t0}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			lang string
			want []string
			rank []int
		}{
			{"hi", []string{"b", "d", "e"}, []int{2, 4, 5}},
			{" HI ", []string{"b", "d", "e"}, []int{2, 4, 5}},
			{"hi-in", []string{"d"}, []int{4}},
			{"zxx", []string{"d"}, []int{4}},
			{"en", []string{"a", "e"}, []int{1, 5}},
			{"", []string{"a", "b", "c", "d", "e", "f"}, []int{1, 2, 3, 4, 5, 6}},
		} {
			c, err := db.Chart(ctx, ChartQuery{Region: "IN", Category: "", Language: tc.lang, At: time.Time{}, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var ranks []int
			for _, e := range c.Entries {
				ids, ranks = append(ids, e.ID), append(ranks, e.Rank)
			}
			if !slices.Equal(ids, tc.want) || !slices.Equal(ranks, tc.rank) {
				t.Errorf("chart in %q = %v ranks %v, want %v ranks %v", tc.lang, ids, ranks, tc.want, tc.rank)
			}
			hits, err := db.Search(ctx, "derby", SearchOptions{Language: tc.lang, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			ids = ids[:0]
			for _, h := range hits {
				ids = append(ids, h.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, tc.want) {
				t.Errorf("search in %q = %v, want %v", tc.lang, ids, tc.want)
			}
			hits, err = db.Search(ctx, "derby", SearchOptions{Language: tc.lang, Region: "IN", Limit: 50})
			if err != nil || len(hits) != len(tc.want) {
				t.Errorf("search in IN and %q = %d hits (%v), want %d", tc.lang, len(hits), err, len(tc.want))
			}
		}
		for _, bad := range []string{"h_", "en%", "e n", "'; --"} {
			if _, err := db.Search(ctx, "derby", SearchOptions{Language: bad}); !errors.Is(err, ErrBadLanguage) {
				t.Errorf("search in %q: %v, want ErrBadLanguage", bad, err)
			}
			if _, err := db.Chart(ctx, ChartQuery{Region: "IN", Category: "", Language: bad, At: time.Time{}, Limit: 50}); !errors.Is(err, ErrBadLanguage) {
				t.Errorf("chart in %q: %v, want ErrBadLanguage", bad, err)
			}
		}
	})
}

// A chart's languages are its run's videos counted under the primary
// subtag of their audio language, else their text language, most first;
// no language, zxx and a tag that is none are no tab, and other runs and
// regions count for nothing.
func TestChartLanguages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	eachStore(t, func(t *testing.T, db *DB) {
		id := run(t, db, ingest.Trending, "IN", t0, page(ingest.Trending, "IN", 1, t0,
			langVid("a", "en", "en"), langVid("b", "hi", ""), langVid("c", "", ""),
			langVid("d", "zxx", "hi-IN"), langVid("e", "HI-Latn", "en"), langVid("f", "hin", ""),
			langVid("g", "", "en-GB"), langVid("h", "zxx", ""), langVid("i", "en_US", "")))
		run(t, db, ingest.Trending, "GB", t0, page(ingest.Trending, "GB", 1, t0, langVid("j", "fr", "fr")))
		later := run(t, db, ingest.Trending, "IN", t0.Add(time.Hour), page(ingest.Trending, "IN", 1, t0.Add(time.Hour), langVid("k", "ta", "")))
		got, err := db.ChartLanguages(ctx, "IN", id)
		if err != nil {
			t.Fatal(err)
		}
		want := []ChartLanguage{{"hi", 3}, {"en", 2}, {"hin", 1}}
		if !slices.Equal(got, want) {
			t.Errorf("languages of the first IN run = %v, want %v", got, want)
		}
		if got, err := db.ChartLanguages(ctx, "IN", later); err != nil || !slices.Equal(got, []ChartLanguage{{"ta", 1}}) {
			t.Errorf("languages of the later IN run = %v, %v; want [{ta 1}]", got, err)
		}
		if got, err := db.ChartLanguages(ctx, "US", id); err != nil || len(got) != 0 {
			t.Errorf("languages of the run in a region it has no entries of = %v, %v; want none", got, err)
		}
	})
}
