package web

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/clock"
)

func TestMarksSplitsSnippets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []Seg
	}{
		{"plain", []Seg{{Text: "plain"}}},
		{"[Prank] <script>", []Seg{{Text: "Prank", Hit: true}, {Text: " <script>"}}},
		{"…a [b] c [d]", []Seg{{Text: "…a "}, {Text: "b", Hit: true}, {Text: " c "}, {Text: "d", Hit: true}}},
		{"open [ only", []Seg{{Text: "open [ only"}}},
	} {
		if got := marks(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("marks(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestNum(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 28400000: "28,400,000", -1234: "-1,234"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitParamIsCapped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		query string
		want  int
		bad   bool
	}{
		{"", 20, false}, {"limit=5", 5, false}, {"limit=100000", 50, false},
		{"limit=0", 0, true}, {"limit=-3", 0, true}, {"limit=ten", 0, true},
	} {
		got, err := limitParam(httptest.NewRequest("GET", "/?"+tc.query, nil), 20, 50)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("limit from %q = %d, %v; want %d, error %v", tc.query, got, err, tc.want, tc.bad)
		}
		if pe, ok := err.(*paramError); tc.bad && (!ok || pe.param != "limit") {
			t.Errorf("limit from %q: error %v does not name limit", tc.query, err)
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := encodeCursor("search", 40)
	n, err := decodeCursor(httptest.NewRequest("GET", "/?cursor="+c, nil), "search")
	if err != nil || n != 40 {
		t.Errorf("decode(encode(40)) = %d, %v", n, err)
	}
	if _, err := decodeCursor(httptest.NewRequest("GET", "/?cursor="+c, nil), "runs"); err == nil {
		t.Errorf("a search cursor was taken for runs")
	}
}

func TestSparkline(t *testing.T) {
	t.Parallel()
	if got := sparkline([]int64{5}); got != "" {
		t.Errorf("one point: %q, want nothing", got)
	}
	if got, want := sparkline([]int64{0, 10}), "0.0,17.0 60.0,1.0"; got != want {
		t.Errorf("sparkline = %q, want %q", got, want)
	}
}

func TestPagesParse(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{Clock: clock.System}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "Config.Clock") {
		t.Fatalf("no clock: %v, want an error naming Config.Clock", err)
	}
}

func TestCategoryParamTakesIDsAndNames(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]string{"": "", "category=0": "", "category=all": "", "category=10": "10",
		"category=music": "10", "category=Gaming": "20", "category=29": "29"} {
		got, err := categoryParam(httptest.NewRequest("GET", "/?"+q, nil))
		if err != nil || got != want {
			t.Errorf("category from %q = %q, %v; want %q", q, got, err, want)
		}
	}
	for _, q := range []string{"category=polka", "category=10a", "category=12345"} {
		_, err := categoryParam(httptest.NewRequest("GET", "/?"+q, nil))
		if pe, ok := err.(*paramError); !ok || pe.param != "category" {
			t.Errorf("category from %q: error %v, want a bad category", q, err)
		}
	}
}

// TestHitSnippetAddsToTheTitle: a hit whose snippet is its title shows
// the title marked and the start of its description, cut at a word; one
// that matched elsewhere shows that snippet under its plain title.
func TestHitSnippetAddsToTheTitle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 40)
	byTitle := HitJSON{VideoCard: VideoCard{Title: "Big match"}, Snippet: "Big [match]", description: "  Live\nfrom the  ground. " + long}
	if got := hitTitle(byTitle); !reflect.DeepEqual(got, []Seg{{Text: "Big "}, {Text: "match", Hit: true}}) {
		t.Errorf("title of a hit matched by its title: %+v", got)
	}
	got := hitSnippet(byTitle)[0].Text
	if !strings.HasPrefix(got, "Live from the ground. word") || !strings.HasSuffix(got, "word…") || len([]rune(got)) > 160 {
		t.Errorf("snippet of a hit matched by its title: %q, want the description's start, cut at a word", got)
	}
	if got := hitSnippet(HitJSON{VideoCard: VideoCard{Title: "x"}, Snippet: "x", description: strings.Repeat("a", 300)})[0].Text; len([]rune(got)) != 160 {
		t.Errorf("a description of one long word: %d runes, want 159 and …", len([]rune(got)))
	}
	elsewhere := HitJSON{VideoCard: VideoCard{Title: "Big match"}, Snippet: "…the [final] whistle", description: "the final whistle"}
	if got := hitTitle(elsewhere); !reflect.DeepEqual(got, []Seg{{Text: "Big match"}}) {
		t.Errorf("title of a hit matched elsewhere: %+v", got)
	}
	if got := hitSnippet(elsewhere); !reflect.DeepEqual(got, marks("…the [final] whistle")) {
		t.Errorf("snippet of a hit matched elsewhere: %+v", got)
	}
}
