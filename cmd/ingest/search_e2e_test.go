package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/regions"
)

// 9. search: the index, its folding, phrases, prefixes and hostile input.
func TestSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once")
	db := openDB(t, h.db())
	// text is everything the index holds for a video, lower-cased.
	text := func(t *testing.T, id string) string {
		return strings.ToLower(queryString(t, db, `SELECT title || ' ' || description || ' ' || tags || ' ' || channel_title FROM videos WHERE id = ?`, id))
	}
	sub := func(t *testing.T) *harness { c := *h; c.t = t; return &c }

	t.Run("football", func(t *testing.T) {
		hits := sub(t).searchJSON("football")
		if len(hits) == 0 {
			t.Fatal("no hits for football")
		}
		for _, x := range hits {
			if len(x.ID) != 11 || x.Title == "" || x.Channel == "" || x.Snippet == "" || len(x.Regions) == 0 {
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
		hits := sub(t).searchJSON("muller")
		if len(hits) == 0 || !strings.Contains(hits[0].Title+hits[0].Channel, "Müller") {
			t.Errorf("muller: want Müller first, got %+v", hits)
		}
	})
	t.Run("phrase", func(t *testing.T) {
		phrase := sub(t).searchJSON("--limit", "1000", `"world cup"`)
		words := sub(t).searchJSON("--limit", "1000", "world", "cup")
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
		prefix := sub(t).searchJSON("--limit", "1000", "foot*")
		word := sub(t).searchJSON("--limit", "1000", "football")
		if len(prefix) < len(word) || len(word) == 0 {
			t.Errorf("foot*: %d hits, football: %d; a prefix finds at least the word", len(prefix), len(word))
		}
		for _, x := range prefix {
			if !strings.Contains(text(t, x.ID), "foot") {
				t.Errorf("hit %s %q has no word starting foot", x.ID, x.Title)
			}
		}
	})
	t.Run("no match", func(t *testing.T) {
		res := sub(t).mustRun(0, "search", "--json", "zzqxjvwk")
		if strings.TrimSpace(res.stdout) != "[]" {
			t.Errorf("no match: want [], got %s", res)
		}
	})
	t.Run("region", func(t *testing.T) {
		all := sub(t).searchJSON("--limit", "1000", "football")
		gb := sub(t).searchJSON("--limit", "1000", "--region", "GB", "football")
		if len(gb) == 0 || len(gb) >= len(all) {
			t.Errorf("football: %d hits, in GB %d; want some, fewer than everywhere", len(all), len(gb))
		}
		for _, x := range gb {
			if !slices.Contains(x.Regions, "GB") {
				t.Errorf("--region GB returned %s seen in %v", x.ID, x.Regions)
			}
		}
	})
	leak := regexp.MustCompile(`(?i)sql logic|fts5|sqlite|no such column|unrecognized token|malformed match|near ".*": syntax`)
	for _, q := range []string{"COVID-19", "AC/DC", "don't", "c++", "NOT", `"unbalanced`, "*", ")(", "foot NOT", "OR", `""`, "NEAR(a b)", "title:football", "^football", "a:b:c", "-", "'", "\\", "%", "_"} {
		t.Run("hostile "+q, func(t *testing.T) {
			res := sub(t).run("search", "--json", q)
			switch res.code {
			case 0:
				var hits []hit
				if err := json.Unmarshal([]byte(res.stdout), &hits); err != nil {
					t.Errorf("exit 0 without a JSON array: %v\n%s", err, res)
				}
			case 2:
				if strings.TrimSpace(res.stderr) == "" {
					t.Errorf("exit 2 without a message:\n%s", res)
				}
			default:
				t.Errorf("want exit 0 or 2, got %s", res)
			}
			if leak.MatchString(res.stdout + res.stderr) {
				t.Errorf("the user sees SQL internals:\n%s", res)
			}
		})
	}
}
