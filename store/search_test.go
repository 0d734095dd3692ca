package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// searchFixture stores a few videos with text chosen to exercise the index.
func searchFixture(t *testing.T, db *DB) {
	t.Helper()
	v := func(id, title, desc, channel string, tags ...string) ingest.Video {
		x := vid(id, title)
		x.Description, x.ChannelTitle, x.Tags = desc, channel, tags
		return x
	}
	us := []ingest.Video{
		v("worldcup", "World Cup final highlights", "The best goals of the final", "FIFA", "football", "soccer"),
		v("cupworld", "Cup of tea around the world", "A tour of tea houses", "Tea Time"),
		v("muller", "Thomas Müller interview", "Bayern forward speaks", "Bundesliga"),
		v("covid", "COVID-19 update", "Latest numbers", "Health News"),
		v("acdc", "AC/DC live at River Plate", "Full concert", "Rock Vault"),
		v("cpp", "Learn C++ in one video", "Templates and pointers", "Code Academy"),
		v("dont", "Don't stop me now", "Queen cover", "Covers"),
		v("tagonly", "Untitled", "Nothing here", "Someone", "skateboarding"),
		v("chan", "Daily vlog", "My day", "Penguinz Channel"),
		v("descmatch", "Another match", "World Cup preview with predictions", "Sports Daily"),
	}
	in := []ingest.Video{
		v("hindi", "हिन्दी गाने 2026", "नए गाने", "T-Series"),
	}
	run(t, db, ingest.Trending, "US", t0, page(ingest.Trending, "US", 1, t0, us...))
	run(t, db, ingest.Trending, "IN", t0, page(ingest.Trending, "IN", 1, t0, in...))
	run(t, db, ingest.Trending, "GB", t0, page(ingest.Trending, "GB", 1, t0, us[0]))
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearchFinds(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		searchFixture(t, db)
		ctx := context.Background()
		for _, tc := range []struct {
			name, q string
			want    []string // in order
		}{
			{"title", "highlights", []string{"worldcup"}},
			{"description", "pointers", []string{"cpp"}},
			{"tag", "skateboarding", []string{"tagonly"}},
			{"channel", "penguinz", []string{"chan"}},
			{"diacritics folded", "muller", []string{"muller"}},
			{"diacritics in query", "MÜLLER", []string{"muller"}},
			{"hindi whole word", "हिन्दी", []string{"hindi"}},
			{"hindi fragment is not a word", "ह", nil},
			{"prefix", "skate*", []string{"tagonly"}},
			{"no prefix without star", "skate", nil},
			{"phrase", `"world cup"`, []string{"worldcup", "descmatch"}},
			{"words in any order", "world cup", []string{"worldcup", "descmatch", "cupworld"}},
			{"title weighs most", "final", []string{"worldcup"}},
			{"covid", "COVID-19", []string{"covid"}},
			{"ac/dc", "AC/DC", []string{"acdc"}},
			{"don't", "don't", []string{"dont"}},
			{"c++", "c++", []string{"cpp"}},
			{"OR", "penguinz OR skateboarding", []string{"chan", "tagonly"}},
			{"NOT", "cup NOT tea", []string{"worldcup", "descmatch"}},
			{"lower-case not is a word", "not", nil},
		} {
			hits, err := db.Search(ctx, tc.q, SearchOptions{})
			if err != nil {
				t.Errorf("%s: Search(%q): %v", tc.name, tc.q, err)
				continue
			}
			got := ids(hits)
			if tc.name == "words in any order" || tc.name == "OR" {
				slices.Sort(got)
				tc.want = slices.Sorted(slices.Values(tc.want))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: Search(%q) = %v, want %v", tc.name, tc.q, got, tc.want)
			}
		}
	})
}

func TestSearchHit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		searchFixture(t, db)
		hits, err := db.Search(context.Background(), "world cup", SearchOptions{})
		if err != nil || len(hits) == 0 {
			t.Fatalf("Search = %v, %v", hits, err)
		}
		h := hits[0]
		if h.ID != "worldcup" || h.Title != "World Cup final highlights" || h.ChannelTitle != "FIFA" ||
			h.ViewCount == nil || *h.ViewCount != 1000 || !slices.Equal(h.Regions, []string{"GB", "US"}) || h.Score <= 0 {
			t.Errorf("hit = %+v", h)
		}
		if !strings.Contains(h.Snippet, "[World] [Cup]") {
			t.Errorf("snippet %q does not mark the matched words with [ ]", h.Snippet)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("hits not best first: %v", hits)
			}
		}
	})
}

func TestSearchRegionAndLimit(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		searchFixture(t, db)
		ctx := context.Background()
		for _, tc := range []struct {
			q    string
			opts SearchOptions
			want int
		}{
			{"world", SearchOptions{}, 3},
			{"world", SearchOptions{Region: "GB"}, 1},
			{"world", SearchOptions{Region: "gb"}, 1},
			{"world", SearchOptions{Region: "IN"}, 0},
			{"gaane*", SearchOptions{Region: "IN"}, 0},
			{"हिन्दी", SearchOptions{Region: "IN"}, 1},
			{"world", SearchOptions{Limit: 2}, 2},
		} {
			hits, err := db.Search(ctx, tc.q, tc.opts)
			if err != nil || len(hits) != tc.want {
				t.Errorf("Search(%q, %+v) = %v, %v; want %d hits", tc.q, tc.opts, ids(hits), err, tc.want)
			}
		}
	})
}

// TestSearchInEveryRegionAVideoIsFoundIn stores one video in three
// regions: first found, then in a page fetched earlier (which leaves the
// video's text as the later page stored it), then in a later page.
func TestSearchInEveryRegionAVideoIsFoundIn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		v := vid("derby", "Derby day highlights")
		for _, p := range []struct {
			region string
			at     time.Time
		}{{"US", t0.Add(2 * time.Hour)}, {"GB", t0}, {"DE", t0.Add(3 * time.Hour)}} {
			run(t, db, ingest.Trending, p.region, p.at, page(ingest.Trending, p.region, 1, p.at, v))
		}
		integrityCheck(t, db)
		for region, want := range map[string]int{"": 1, "US": 1, "GB": 1, "DE": 1, "FR": 0} {
			hits, err := db.Search(ctx, "derby", SearchOptions{Region: region})
			if err != nil || len(hits) != want {
				t.Errorf("Search(derby, %q) = %v, %v; want %d hits", region, ids(hits), err, want)
			}
			if len(hits) == 1 && !slices.Equal(hits[0].Regions, []string{"DE", "GB", "US"}) {
				t.Errorf("Search(derby, %q): regions %v, want DE GB US", region, hits[0].Regions)
			}
		}
	})
}

func TestSearchNastyInput(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		searchFixture(t, db)
		ctx := context.Background()
		for _, q := range []string{"COVID-19", "AC/DC", "don't", "c++", "NOT", `"unbalanced`,
			"*", "foo AND", ")(", "", "   ", `""`, `"`, "AND OR NOT", "NEAR(a b)", "title:world",
			"^world", "-world", "world*cup", "a\"b\"c", `"world cup"*`, "**", "*world", "{title}: x",
			"'", "\x00", "OR world", "world OR", "world NOT", "NOT world", "+", "@#$%", "cup NOT NOT tea"} {
			hits, err := db.Search(ctx, q, SearchOptions{})
			if err != nil && !errors.Is(err, ErrBadQuery) {
				t.Errorf("Search(%q): %v, want results or ErrBadQuery", q, err)
			}
			if err != nil && (strings.Contains(err.Error(), "SQL") || strings.Contains(err.Error(), "fts5")) {
				t.Errorf("Search(%q): error shows SQL: %v", q, err)
			}
			_ = hits
		}
		for _, q := range []string{"*", "", ")(", "NOT", `""`, "@#$%"} {
			if _, err := db.Search(ctx, q, SearchOptions{}); !errors.Is(err, ErrBadQuery) {
				t.Errorf("Search(%q) = %v, want ErrBadQuery", q, err)
			}
		}
	})
}

func TestMatchExpr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"world cup", `"world" "cup"`},
		{`"world cup"`, `"world cup"`},
		{`"world cup" final`, `"world cup" "final"`},
		{"foot*", `"foot"*`},
		{`"world cu"*`, `"world cu"*`},
		{"COVID-19", `"covid 19"`},
		{"don't", `"don t"`},
		{"Müller", `"muller"`},
		{"焼鳥屋", `"焼鳥 鳥屋"`},
		{"台", `"台"*`},
		{"2026年", `"2026 年"*`},
		{`a"b`, `"a" "b"`},
		{`"unbalanced`, `"unbalanced"`},
		{`say "hi" "there`, `"say" "hi" "there"`},
		{"foo AND", `"foo"`},
		{"foo AND bar", `"foo" "bar"`},
		{"foo OR bar", `"foo" OR "bar"`},
		{"OR foo", `"foo"`},
		{"foo OR", `"foo"`},
		{"foo NOT bar", `"foo" NOT "bar"`},
		{"foo NEAR bar", `"foo" "bar"`},
		{`"NOT"`, `"not"`},
		{"c++ )(", `"c"`},
		{"Home🤴", `"home"`},
		{"x * y", `"x" "y"`},
	} {
		got, err := matchExpr(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("matchExpr(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "*", ")(", `""`, "NOT foo", "AND", "OR OR"} {
		if got, err := matchExpr(in); !errors.Is(err, ErrBadQuery) {
			t.Errorf("matchExpr(%q) = %q, %v; want ErrBadQuery", in, got, err)
		}
	}
}

func TestSearchBroad(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		searchFixture(t, db)
		db.rankWindow = 3 // "about" is in every description: a broad query
		ctx := context.Background()
		hits, err := db.Search(ctx, "cup", SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Title matches first (by views, all equal here: then by rowid order of
		// the window), then the rest, most recent first.
		got := ids(hits)
		if len(got) != 3 || got[2] != "descmatch" || !slices.Contains(got[:2], "worldcup") || !slices.Contains(got[:2], "cupworld") {
			t.Errorf("broad Search(cup) = %v, want worldcup and cupworld (titles) then descmatch", got)
		}
		for _, h := range hits {
			if h.Score != 0 || !strings.Contains(h.Snippet, "[") {
				t.Errorf("broad hit %+v: want score 0 and a marked snippet", h)
			}
		}
		if hits, err := db.Search(ctx, "cup", SearchOptions{Region: "GB"}); err != nil || !slices.Equal(ids(hits), []string{"worldcup"}) {
			t.Errorf("broad Search(cup, GB) = %v, %v; want [worldcup]", ids(hits), err)
		}
		if hits, err := db.Search(ctx, "cup", SearchOptions{Limit: 1}); err != nil || len(hits) != 1 {
			t.Errorf("broad Search(cup, limit 1) = %v, %v", ids(hits), err)
		}
	})
}

// SearchCounted counts a query's matches up to more than most, as the
// search route shows them ("1,000+").
func TestSearchCounted(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, db *DB) {
		searchFixture(t, db)
		ctx := context.Background()
		for _, tc := range []struct {
			q      string
			region string
			most   int
			want   func(int) bool
		}{
			{"world", "", 1, func(n int) bool { return n > 1 }},
			{"world", "", 100, func(n int) bool { return n == 3 }},
			{"world", "GB", 100, func(n int) bool { return n == 1 }},
			{"world", "IN", 100, func(n int) bool { return n == 0 }},
		} {
			hits, n, err := db.SearchCounted(ctx, tc.q, SearchOptions{Region: tc.region, Limit: 2}, tc.most)
			if err != nil || !tc.want(n) || len(hits) != min(n, 2) {
				t.Errorf("SearchCounted(%q, %q, %d) = %d hits, count %d, %v", tc.q, tc.region, tc.most, len(hits), n, err)
			}
		}
	})
}

// matchExpr turns what a user typed into an FTS5 MATCH expression that
// cannot be a syntax error: see parseQuery.
func matchExpr(q string) (string, error) {
	pq, err := parseQuery(q)
	return pq.expr, err
}
