package fakeyt

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest/regions"
)

// clientChart pages through region's chart with the real client, asking
// for ids alone, and returns its videos and the size of each page.
func clientChart(t *testing.T, svc *youtube.Service, region string) ([]*youtube.Video, []int) {
	t.Helper()
	var all []*youtube.Video
	var sizes []int
	call := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode(region).MaxResults(50)
	for token := ""; ; {
		res, err := call.PageToken(token).Do()
		if err != nil {
			t.Fatalf("%s after %d videos: %v", region, len(all), err)
		}
		all = append(all, res.Items...)
		sizes = append(sizes, len(res.Items))
		if token = res.NextPageToken; token == "" {
			return all, sizes
		}
	}
}

// Every catalogued region's chart pages to its end with the real client;
// the generated charts' lengths differ as the real charts' do, some end on
// a short page, and some videos trend in several regions at once.
func TestEveryCataloguedRegionHasAChart(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	svc := fx.service(t)
	lengths := map[int]bool{}
	shortPages, regionsOf := 0, map[string]map[string]bool{}
	for _, r := range regions.Builtin {
		videos, sizes := clientChart(t, svc, r.Code)
		if len(videos) == 0 || len(videos) > 200 || len(videos) != fx.fake.ChartLength(r.Code) {
			t.Errorf("%s: %d videos, ChartLength says %d; want 1-200 and equal", r.Code, len(videos), fx.fake.ChartLength(r.Code))
		}
		if _, handmade := fx.fake.fx.charts[r.Code]; !handmade {
			lengths[len(videos)] = true
			if last := sizes[len(sizes)-1]; last < 50 {
				shortPages++
			}
		}
		seen := map[string]bool{}
		for _, v := range videos {
			if seen[v.Id] {
				t.Errorf("%s: video %q twice", r.Code, v.Id)
			}
			seen[v.Id] = true
			if _, handmade := fx.fake.fx.charts[r.Code]; handmade {
				continue
			}
			if regionsOf[v.Id] == nil {
				regionsOf[v.Id] = map[string]bool{}
			}
			regionsOf[v.Id][r.Code] = true
		}
	}
	if len(lengths) < 5 || !lengths[200] || shortPages < 5 {
		t.Errorf("generated charts' lengths %v with %d short last pages; want 200 and several shorter, some ending on a short page", lengths, shortPages)
	}
	shared := 0
	for _, in := range regionsOf {
		if len(in) >= 3 {
			shared++
		}
	}
	if shared < 10 {
		t.Errorf("%d videos trend in three generated regions or more, want at least 10", shared)
	}
}

// scriptOf says which script a generated region's titles must carry.
var scriptOf = map[string]*unicode.RangeTable{
	"EG": unicode.Arabic, "PK": unicode.Arabic, "IL": unicode.Hebrew, "RU": unicode.Cyrillic,
	"GR": unicode.Greek, "GE": unicode.Georgian, "NP": unicode.Devanagari, "BD": unicode.Bengali,
	"LK": unicode.Sinhala, "LA": unicode.Lao, "KH": unicode.Khmer, "HK": unicode.Han,
}

// titles pages through region's chart asking for snippets alone and
// returns its titles.
func titles(t *testing.T, fx *fixture, region string) []string {
	t.Helper()
	var out []string
	for token := ""; ; {
		q := url.Values{"key": {key}, "part": {"snippet"}, "chart": {"mostPopular"}, "regionCode": {region}, "maxResults": {"50"}, "pageToken": {token}}
		status, b := fx.get(t, "/youtube/v3/videos", q.Encode())
		if status != 200 {
			t.Fatalf("%s: status %d: %s", region, status, b)
		}
		var page struct {
			NextPageToken string
			Items         []struct{ Snippet struct{ Title string } }
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			out = append(out, it.Snippet.Title)
		}
		if token = page.NextPageToken; token == "" {
			return out
		}
	}
}

// A generated region's chart is written in the scripts its real chart
// carries, with English mixed in, and with the mess of real items.
func TestGeneratedChartsCarryTheirScripts(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for region, script := range scriptOf {
		items := titles(t, fx, region)
		var inScript, english int
		for _, title := range items {
			if strings.ContainsFunc(title, func(r rune) bool { return unicode.Is(script, r) }) {
				inScript++
			}
			if !strings.ContainsFunc(title, func(r rune) bool { return r > unicode.MaxASCII }) {
				english++
			}
		}
		if inScript < len(items)/3 || english == 0 {
			t.Errorf("%s: %d of %d titles in its script, %d in English; want a third or more in its script and some English", region, inScript, len(items), english)
		}
	}
	for region, marks := range map[string]string{"VN": "ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđ", "PL": "ąćęłńóśźż", "TR": "çğıöşüİ"} {
		found := false
		for _, title := range titles(t, fx, region) {
			found = found || strings.ContainsAny(title, marks)
		}
		if !found {
			t.Errorf("%s: no title carries its letters (%s)", region, marks)
		}
	}
	checkMess(t, fx, "MX")
}

// checkMess checks that region's chart carries what real charts do: emoji
// glued to a word, spaceless runs, a hidden likeCount, items without tags.
func checkMess(t *testing.T, fx *fixture, region string) {
	t.Helper()
	items, _ := chartItems(t, fx, region)
	var glued, hiddenLikes, noTags int
	for _, it := range items {
		sn := it["snippet"].(map[string]any)
		runes := []rune(sn["title"].(string))
		for i := 1; i < len(runes); i++ {
			if unicode.IsLetter(runes[i-1]) && unicode.Is(unicode.So, runes[i]) {
				glued++
				break
			}
		}
		if st, ok := it["statistics"].(map[string]any); ok && st["likeCount"] == nil {
			hiddenLikes++
		}
		if sn["tags"] == nil {
			noTags++
		}
	}
	if glued == 0 || hiddenLikes == 0 || noTags == 0 {
		t.Errorf("%s: %d titles with an emoji glued to a word, %d hidden likeCounts, %d items without tags; want some of each",
			region, glued, hiddenLikes, noTags)
	}
}

// A code the upstream has no chart for (an ISO code outside the
// catalogue, or one NoChart names) gets the upstream's documented answer:
// 400 videoChartNotFound.
func TestUnsupportedRegionAnswersVideoChartNotFound(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.fake.NoChart("MX")
	svc := fx.service(t)
	for _, region := range []string{"AQ", "MX"} {
		_, err := svc.Videos.List([]string{"snippet"}).Chart("mostPopular").RegionCode(region).MaxResults(50).Do()
		var ge *googleapi.Error
		if !errors.As(err, &ge) {
			t.Fatalf("%s: err %v, want a googleapi.Error", region, err)
		}
		if ge.Code != 400 || len(ge.Errors) != 1 || ge.Errors[0].Reason != "videoChartNotFound" ||
			ge.Message != "The requested video chart is not supported or is not available." {
			t.Errorf("%s: got %d %+v %q; want 400 videoChartNotFound with the documented message", region, ge.Code, ge.Errors, ge.Message)
		}
	}
	if n := fx.fake.ChartLength("AQ"); n != 0 {
		t.Errorf("AQ: ChartLength %d, want 0", n)
	}
}

// i18nRegions.list names the whole catalogue, in its shape: kind, etag and
// items of snippet.gl and snippet.name.
func TestI18nRegionsNamesTheCatalogue(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	res, err := fx.service(t).I18nRegions.List([]string{"snippet"}).Hl("en_US").Do()
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != "youtube#i18nRegionListResponse" || res.Etag == "" || len(res.Items) != len(regions.Builtin) {
		t.Fatalf("kind %q, etag %q, %d items; want the list's kind, an etag and %d items", res.Kind, res.Etag, len(res.Items), len(regions.Builtin))
	}
	for i, it := range res.Items {
		want := regions.Builtin[i]
		if it.Kind != "youtube#i18nRegion" || it.Id != want.Code || it.Snippet.Gl != want.Code || it.Snippet.Name != want.Name {
			t.Errorf("item %d: %s %s gl %q name %q; want %s %q", i, it.Kind, it.Id, it.Snippet.Gl, it.Snippet.Name, want.Code, want.Name)
		}
	}
}

// Every generated region says what it speaks, in languages that have
// words, and no handcrafted or uncatalogued region is listed.
func TestGeneratedRegionsSpeakKnownLanguages(t *testing.T) {
	t.Parallel()
	fx := New().fx
	for _, r := range regions.Builtin {
		if _, handmade := fx.charts[r.Code]; !handmade && len(spoken[r.Code]) == 0 {
			t.Errorf("%s: generated, but speaks nothing", r.Code)
		}
	}
	for code, langs := range spoken {
		if _, handmade := fx.charts[code]; handmade || fx.generated[code] == nil {
			t.Errorf("%s: listed in spoken, but handcrafted or not catalogued", code)
		}
		for _, l := range langs {
			if w := langOf(l); len(w.kinds) == 0 || len(w.fillers) == 0 || len(w.channels) == 0 || w.code != l {
				t.Errorf("%s: language %q has no words of its own", code, l)
			}
		}
	}
}

// A generated chart moves as the handcrafted ones do, and the videos that
// enter it are written in the region's script.
func TestGeneratedChartsMove(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	c := &clock{t: Anchor.Add(30 * 24 * time.Hour)}
	fx.fake.Move(7, c.now)
	still := map[string]bool{}
	for _, v := range fx.fake.fx.generated["GE"].get().chart {
		still[v.ID] = true
	}
	c.add(6 * time.Hour)
	items, _ := chartItems(t, fx, "GE")
	entered := 0
	for _, it := range items {
		title := it["snippet"].(map[string]any)["title"].(string)
		if !still[it["id"].(string)] && strings.ContainsFunc(title, func(r rune) bool { return unicode.Is(unicode.Georgian, r) }) {
			entered++
		}
	}
	if len(items) != fullChart || entered == 0 {
		t.Errorf("GE after six hours: %d videos, %d new in Georgian; want %d and some", len(items), entered, fullChart)
	}
}

// A video of a generated region's chart is found by id, as a refresh or
// tracking asks for it, whichever region's chart was made first: the
// first id no handcrafted chart holds makes every generated chart.
func TestGeneratedChartsVideosAreFoundByID(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	svc := fx.service(t)
	for _, code := range []string{"EG", "NP", "KH"} {
		videos, _ := clientChart(t, svc, code)
		ids := make([]string, 0, 50)
		for _, v := range videos[:min(50, len(videos))] {
			ids = append(ids, v.Id)
		}
		res, err := svc.Videos.List([]string{"id"}).Id(ids...).Do()
		if err != nil {
			t.Fatalf("%s by id: %v", code, err)
		}
		if len(res.Items) != len(ids) {
			t.Errorf("%s: %d of the chart's first %d videos found by id, want all", code, len(res.Items), len(ids))
		}
	}
}
