package regions

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []Chart
	}{
		{"empty is the defaults", "", charts(Default, 1, 200)},
		{"codes in order, repeats dropped", " us,gb,US ,de", []Chart{{"US", 1, 200}, {"GB", 1, 200}, {"DE", 1, 200}}},
		{"settings on a code", "US:tier=1,GB:depth=50:tier=3", []Chart{{"US", 1, 200}, {"GB", 3, 50}}},
		{"a code's settings win over all's", "US:depth=200,all:tier=3:depth=50", append([]Chart{{"US", 1, 200}},
			charts(without(Builtin.Codes(), "US"), 3, 50)...)},
		{"all before a code keeps the code's", "all:tier=2,JP:tier=1", func() []Chart {
			out := charts(Builtin.Codes(), 2, 200)
			out[slices.Index(Builtin.Codes(), "JP")].Tier = 1
			return out
		}()},
		{"default then a region", "default:depth=100,NG", append(charts(Default, 1, 100), Chart{"NG", 1, 200})},
		{"a code outside the catalogue", "AQ", []Chart{{"AQ", 1, 200}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.text, Builtin)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("Parse(%q):\n got %v, %v\nwant %v", tc.text, got, err, tc.want)
			}
		})
	}
}

func TestParseErrorsNameTheItem(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"XX":                  `"XX" is not a region code`,
		"USA":                 `"USA"`,
		"US,,GB":              `"" is not a region code`,
		"US:tier=0":           "tier must be 1-24, got 0",
		"US:tier=x":           `"tier=x" is not tier=N or depth=N`,
		"US:depth=60":         "depth must be 50, 100, 150 or 200",
		"US:depth=250":        "got 250",
		"US:speed=2":          `unknown setting "speed"`,
		"US:tier=2,US:tier=3": "US is given settings twice",
		"uk":                  `"uk" is not a region code (like US, GB, DE), "all" or "default"; did you mean GB (United Kingdom)?`,
		"EL:depth=50":         "did you mean GR (Greece)?",
		"germany":             "did you mean DE (Germany)?",
		"Switz":               "did you mean CH (Switzerland)?",
	} {
		_, err := Parse(text, Builtin)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): got %v, want an error with %q", text, err, want)
		}
	}
}

func TestCatalogue(t *testing.T) {
	t.Parallel()
	if len(Builtin) < 100 {
		t.Errorf("the built-in catalogue has %d regions; the upstream charts over a hundred", len(Builtin))
	}
	if !slices.IsSortedFunc(Builtin, func(a, b Region) int { return strings.Compare(a.Code, b.Code) }) {
		t.Error("the built-in catalogue is not sorted by code: Find would miss")
	}
	for _, r := range Builtin {
		if !Valid(r.Code) || r.Name == "" || !slices.Contains(Areas, r.Area) {
			t.Errorf("%+v: want a valid code, a name and one of %v", r, Areas)
		}
		if got, ok := Builtin.Find(r.Code); !ok || got != r {
			t.Errorf("Find(%s) = %+v, %v", r.Code, got, ok)
		}
	}
	for _, code := range Default {
		if _, ok := Builtin.Find(code); !ok {
			t.Errorf("default region %s is not in the catalogue", code)
		}
	}
	if got := Builtin.Name("AQ"); got != "AQ" {
		t.Errorf("Name of a code outside the catalogue: got %q, want the code", got)
	}
	got := Sorted([]Region{{Code: "US", Name: "USA"}, {Code: "AE", Name: "UAE"}, {Code: "US", Name: "again"}})
	if want := (Catalogue{{"AE", "UAE", MiddleEast}, {"US", "USA", Americas}}); !slices.Equal(got, want) {
		t.Errorf("Sorted: got %v, want %v", got, want)
	}
}

func TestPages(t *testing.T) {
	t.Parallel()
	for depth, want := range map[int]int{50: 1, 100: 2, 150: 3, 200: 4} {
		if got := (Chart{Depth: depth}).Pages(); got != want {
			t.Errorf("depth %d: %d pages, want %d", depth, got, want)
		}
	}
}

func charts(codes []string, tier, depth int) []Chart {
	out := make([]Chart, len(codes))
	for i, c := range codes {
		out[i] = Chart{c, tier, depth}
	}
	return out
}

func without(codes []string, drop string) []string {
	return slices.DeleteFunc(slices.Clone(codes), func(c string) bool { return c == drop })
}

// A selection the catalogue refuses is a configuration error naming
// --regions, the parse's words after it; one it holds is its charts.
func TestSelectionOfIsAConfigError(t *testing.T) {
	t.Parallel()
	got, err := Selection("US:tier=2").Of(Builtin)
	if err != nil || len(got) != 1 || got[0].Code != "US" || got[0].Tier != 2 {
		t.Errorf("US:tier=2 of the built-in catalogue: %+v, %v", got, err)
	}
	_, err = Selection("US,QQ").Of(Builtin)
	_, parsed := Parse("US,QQ", Builtin)
	var ce *ingest.ConfigError
	if !errors.As(err, &ce) || err.Error() != "--regions: "+parsed.Error() {
		t.Errorf("US,QQ: %v, want a configuration error: --regions: %v", err, parsed)
	}
}

// TestSuggestNamesNothingUnsure: a code with no alias, or a name that
// begins several regions' names, suggests none.
func TestSuggestNamesNothingUnsure(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"XX", "United", "ab", ""} {
		if got := Suggest(text, Builtin); got != "" {
			t.Errorf("Suggest(%q) = %q, want none", text, got)
		}
	}
}
