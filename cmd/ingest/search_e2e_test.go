package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// 9. search: what the binary shows of a search: its hits in JSON with
// every field, an empty JSON array for no match, and hostile input
// answered with exit 0 or a message with exit 2, never SQL's words. What
// the index finds is store's to show (store/search_fetched_test.go).
func TestSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once")
	sub := func(t *testing.T) *harness { c := *h; c.t = t; return &c }

	t.Run("json", func(t *testing.T) {
		hits := sub(t).searchJSON("football")
		if len(hits) == 0 {
			t.Fatal("no hits for football")
		}
		for _, x := range hits {
			if len(x.ID) != 11 || x.Title == "" || x.Channel == "" || x.Snippet == "" || len(x.Regions) == 0 {
				t.Errorf("hit lacks a field: %+v", x)
			}
		}
	})
	t.Run("no match", func(t *testing.T) {
		res := sub(t).mustRun(0, "search", "--json", "zzqxjvwk")
		if strings.TrimSpace(res.stdout) != "[]" {
			t.Errorf("no match: want [], got %s", res)
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
