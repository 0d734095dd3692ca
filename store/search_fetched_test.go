package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// TestSearchFetchedCharts: on the default regions' charts as the passes
// store them from the upstream, search finds words in the videos' text, a
// title match first, whatever their accents, phrases, prefixes, and only a
// region's videos when asked.
func TestSearchFetchedCharts(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	passtest.Fill(t, db, regions.Default...)
	// text is everything the index holds for a video, lower-cased.
	text := func(t *testing.T, id string) string {
		t.Helper()
		var s string
		if err := db.Reader().QueryRow(`SELECT title || ' ' || description || ' ' || tags || ' ' || channel_title FROM videos WHERE id = ?`, id).Scan(&s); err != nil {
			t.Fatalf("video %s: %v", id, err)
		}
		return strings.ToLower(s)
	}
	search := func(t *testing.T, q string, o store.SearchOptions) []store.Hit {
		t.Helper()
		if o.Limit == 0 {
			o.Limit = 20
		}
		hits, err := db.Search(context.Background(), q, o)
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return hits
	}
	all := store.SearchOptions{Limit: 1000}

	t.Run("football", func(t *testing.T) {
		hits := search(t, "football", store.SearchOptions{})
		if len(hits) == 0 {
			t.Fatal("no hits for football")
		}
		for _, x := range hits {
			if len(x.ID) != 11 || x.Title == "" || x.ChannelTitle == "" || x.Snippet == "" || len(x.Regions) == 0 {
				t.Errorf("hit lacks a field: %+v", x)
			}
			for _, r := range x.Regions {
				if !slices.Contains(regions.Default, r) {
					t.Errorf("hit %s: region %q", x.ID, r)
				}
			}
			if !strings.Contains(text(t, x.ID), "football") {
				t.Errorf("hit %s %q has no football in its text", x.ID, x.Title)
			}
		}
		if !strings.Contains(strings.ToLower(hits[0].Title), "football") {
			t.Errorf("best match %q has no football in its title; a title match weighs most", hits[0].Title)
		}
	})
	t.Run("diacritics", func(t *testing.T) {
		hits := search(t, "muller", store.SearchOptions{})
		if len(hits) == 0 || !strings.Contains(hits[0].Title+hits[0].ChannelTitle, "Müller") {
			t.Errorf("muller: want Müller first, got %+v", hits)
		}
	})
	t.Run("phrase", func(t *testing.T) {
		phrase, words := search(t, `"world cup"`, all), search(t, "world cup", all)
		if len(phrase) == 0 || len(words) < len(phrase) {
			t.Fatalf(`"world cup": %d hits, world cup: %d; want some, and no more than the words`, len(phrase), len(words))
		}
		for _, x := range phrase {
			if !strings.Contains(text(t, x.ID), "world cup") {
				t.Errorf(`hit %s %q does not hold the phrase "world cup"`, x.ID, x.Title)
			}
		}
	})
	t.Run("prefix", func(t *testing.T) {
		prefix, word := search(t, "foot*", all), search(t, "football", all)
		if len(prefix) < len(word) || len(word) == 0 {
			t.Errorf("foot*: %d hits, football: %d; a prefix finds at least the word", len(prefix), len(word))
		}
		for _, x := range prefix {
			if !strings.Contains(text(t, x.ID), "foot") {
				t.Errorf("hit %s %q has no word starting foot", x.ID, x.Title)
			}
		}
	})
	t.Run("region", func(t *testing.T) {
		everywhere := search(t, "football", all)
		gb := search(t, "football", store.SearchOptions{Region: "GB", Limit: 1000})
		if len(gb) == 0 || len(gb) >= len(everywhere) {
			t.Errorf("football: %d hits, in GB %d; want some, fewer than everywhere", len(everywhere), len(gb))
		}
		for _, x := range gb {
			if !slices.Contains(x.Regions, "GB") {
				t.Errorf("the region GB returned %s seen in %v", x.ID, x.Regions)
			}
		}
	})
}

// TestSearchFindsAWordInsideASpacelessTitle: a word inside a run of Lao
// letters without spaces, in a generated region's chart as the pass stores
// it, is found by search.
func TestSearchFindsAWordInsideASpacelessTitle(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	fake := passtest.Fill(t, db, "LA")
	const word = "ວຽງຈັນ" // Vientiane
	var want []string
	for _, v := range fake.Chart("LA") {
		if strings.Contains(v.Title, word) && !strings.Contains(v.Title, " "+word+" ") {
			want = append(want, v.ID)
		}
	}
	if len(want) == 0 {
		t.Fatalf("no LA title holds %s inside a run", word)
	}
	hits, err := db.Search(context.Background(), word, store.SearchOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, hit := range hits {
		got = append(got, hit.ID)
	}
	for _, id := range want {
		if !slices.Contains(got, id) {
			t.Errorf("search %s: %s missing from %d hits", word, id, len(hits))
		}
	}
}
