package fakeyt

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

const key = "test-key-7c1d"

type fixture struct {
	fake *Fake
	srv  *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := New()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return &fixture{fake: f, srv: srv}
}

// get sends a raw query and returns the status and the body.
func (fx *fixture) get(t *testing.T, path, rawQuery string) (int, []byte) {
	t.Helper()
	res, err := http.Get(fx.srv.URL + path + "?" + rawQuery)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

type rawList struct {
	Kind          string `json:"kind"`
	NextPageToken string `json:"nextPageToken"`
	PageInfo      struct {
		TotalResults int `json:"totalResults"`
	} `json:"pageInfo"`
	Items []map[string]any `json:"items"`
}

func decode(t *testing.T, b []byte) rawList {
	t.Helper()
	var l rawList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return l
}

type rawError struct {
	Error struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Errors  []struct {
			Message, Domain, Reason string
		} `json:"errors"`
		Status  string           `json:"status"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

func decodeErr(t *testing.T, b []byte) rawError {
	t.Helper()
	var e rawError
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Code == 0 || len(e.Error.Errors) == 0 {
		t.Fatalf("not an API error body: %s (%v)", b, err)
	}
	return e
}

func chartQuery(region, token string) string {
	v := url.Values{"key": {key}, "part": {"snippet,statistics,contentDetails"}, "chart": {"mostPopular"},
		"regionCode": {region}, "maxResults": {"50"}}
	if token != "" {
		v.Set("pageToken", token)
	}
	return v.Encode()
}

func TestChartPagesToTheEnd(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	for _, region := range regions.Default {
		t.Run(region, func(t *testing.T) {
			seen, token, pages := map[string]bool{}, "", 0
			for {
				status, b := fx.get(t, "/youtube/v3/videos", chartQuery(region, token))
				if status != 200 {
					t.Fatalf("status %d: %s", status, b)
				}
				l := decode(t, b)
				pages++
				if l.PageInfo.TotalResults != ChartLengths[region] {
					t.Errorf("totalResults = %d, want %d", l.PageInfo.TotalResults, ChartLengths[region])
				}
				for _, it := range l.Items {
					seen[it["id"].(string)] = true
				}
				if token = l.NextPageToken; token == "" {
					break
				}
				if _, err := decodeOffsetPlain(token); err == nil {
					t.Errorf("token %q is a plain offset", token)
				}
			}
			if got, want := len(seen), ChartLengths[region]; got != want {
				t.Errorf("distinct videos = %d, want %d", got, want)
			}
			if want := (ChartLengths[region] + 49) / 50; pages != want {
				t.Errorf("pages = %d, want %d", pages, want)
			}
		})
	}
}

func decodeOffsetPlain(tok string) (int, error) {
	var n int
	err := json.Unmarshal([]byte(tok), &n)
	return n, err
}

func TestChartLengthsDiffer(t *testing.T) {
	t.Parallel()
	want := map[string]int{"US": 200, "GB": 77, "CA": 84}
	for r, n := range want {
		if got := New().ChartLength(r); got != n {
			t.Errorf("%s chart = %d, want %d", r, got, n)
		}
	}
	for _, r := range regions.Default {
		if n := ChartLengths[r]; n < 50 || n > 200 {
			t.Errorf("%s chart = %d, want 50..200", r, n)
		}
	}
}

func TestPartRepeatedOrJoined(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	base := "key=" + key + "&chart=mostPopular&regionCode=GB&maxResults=3"
	_, joined := fx.get(t, "/youtube/v3/videos", base+"&part=snippet,statistics,contentDetails")
	_, repeated := fx.get(t, "/youtube/v3/videos", base+"&part=snippet&part=statistics&part=contentDetails")
	if string(joined) != string(repeated) {
		t.Errorf("repeated part differs from joined:\n%s\n%s", repeated, joined)
	}
	it := decode(t, joined).Items[0]
	for _, p := range []string{"snippet", "statistics", "contentDetails"} {
		if it[p] == nil {
			t.Errorf("part %s missing from %v", p, it)
		}
	}
	_, onlySnippet := fx.get(t, "/youtube/v3/videos", base+"&part=snippet")
	if it := decode(t, onlySnippet).Items[0]; it["statistics"] != nil {
		t.Errorf("statistics sent without being asked for")
	}
	if status, b := fx.get(t, "/youtube/v3/videos", base); status != 400 || decodeErr(t, b).Error.Errors[0].Reason != "required" {
		t.Errorf("no part: %d %s", status, b)
	}
}

func TestCountsAreStringsAndHiddenAbsent(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	var hiddenLikes, hiddenComments, shown int
	token := ""
	for {
		_, b := fx.get(t, "/youtube/v3/videos", chartQuery("US", token))
		l := decode(t, b)
		for _, it := range l.Items {
			st := it["statistics"].(map[string]any)
			if _, ok := st["viewCount"].(string); !ok {
				t.Fatalf("viewCount not a string: %v", st)
			}
			if v, ok := st["likeCount"]; !ok {
				hiddenLikes++
			} else if _, isStr := v.(string); !isStr {
				t.Fatalf("likeCount not a string: %v", st)
			} else {
				shown++
			}
			if _, ok := st["commentCount"]; !ok {
				hiddenComments++
			}
		}
		if token = l.NextPageToken; token == "" {
			break
		}
	}
	if hiddenLikes == 0 || hiddenComments == 0 || shown < 150 {
		t.Errorf("hidden likes %d, hidden comments %d, shown %d: want some hidden, most shown", hiddenLikes, hiddenComments, shown)
	}
}

func TestSnippetShape(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	_, b := fx.get(t, "/youtube/v3/videos", chartQuery("DE", ""))
	l := decode(t, b)
	if l.Kind != "youtube#videoListResponse" {
		t.Errorf("kind = %q", l.Kind)
	}
	sn := l.Items[0]["snippet"].(map[string]any)
	for _, f := range []string{"title", "description", "channelId", "channelTitle", "categoryId", "publishedAt", "localized"} {
		if sn[f] == nil {
			t.Errorf("snippet.%s missing", f)
		}
	}
	if _, err := time.Parse(time.RFC3339, sn["publishedAt"].(string)); err != nil {
		t.Errorf("publishedAt: %v", err)
	}
	cd := l.Items[0]["contentDetails"].(map[string]any)
	if d, _ := cd["duration"].(string); !strings.HasPrefix(d, "P") {
		t.Errorf("duration = %q", d)
	}
}

func TestMultilingualTitles(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, v := range New().fx.byID {
		b.WriteString(v.Title + "\n" + v.Description + "\n")
	}
	all := b.String()
	for _, w := range []string{"Müller", "Fußball", "été", "Écoutez", "São Paulo", "Copa do Mundo", "क्रिकेट", "football", "World Cup"} {
		if !strings.Contains(all, w) {
			t.Errorf("no fixture contains %q", w)
		}
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	q := "part=snippet&chart=mostPopular&regionCode=US"
	status, b := fx.get(t, "/youtube/v3/videos", q)
	if e := decodeErr(t, b); status != 403 || e.Error.Errors[0].Reason != "forbidden" {
		t.Errorf("missing key: %d %s", status, b)
	}
	fx.fake.AllowKeys("good")
	status, b = fx.get(t, "/youtube/v3/videos", q+"&key=bad")
	e := decodeErr(t, b)
	if status != 400 || e.Error.Errors[0].Reason != "badRequest" || e.Error.Details[0]["reason"] != "API_KEY_INVALID" {
		t.Errorf("unknown key: %d %s", status, b)
	}
	if strings.Contains(string(b), "bad") && strings.Contains(string(b), "key=bad") {
		t.Errorf("body echoes the key: %s", b)
	}
	if status, _ = fx.get(t, "/youtube/v3/videos", q+"&key=good"); status != 200 {
		t.Errorf("good key: %d", status)
	}
	if fx.fake.Charged("bad") != 1 || fx.fake.Charged("") != 1 {
		t.Errorf("rejected calls charged bad=%d none=%d, want 1 each", fx.fake.Charged("bad"), fx.fake.Charged(""))
	}
}

func TestErrorShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		setup  func(f *Fake)
		path   string
		status int
		reason string
		domain string
		detail string
		msg    string
	}{
		{"quotaExceeded", func(f *Fake) { f.ExhaustQuota(QuotaExceeded) }, "videos", 403, "quotaExceeded", "youtube.quota", "", "quota"},
		{"dailyLimitExceeded", func(f *Fake) { f.ExhaustQuota(DailyLimitExceeded) }, "videos", 403, "dailyLimitExceeded", "usageLimits", "", "Daily Limit"},
		{"searchPerDay", func(f *Fake) { f.ExhaustQuota(SearchPerDay) }, "search", 429, "rateLimitExceeded", "global", "RATE_LIMIT_EXCEEDED", "'Search Queries per day'"},
		{"searchPerDayLeavesVideos", func(f *Fake) { f.ExhaustQuota(SearchPerDay) }, "videos", 200, "", "", "", ""},
		{"statsPerDay", func(f *Fake) { f.ExhaustQuota(StatsPerDay) }, "videos:batchGetStats", 429, "rateLimitExceeded", "global", "RATE_LIMIT_EXCEEDED", "'Video Stats Queries per day'"},
		{"statsPerDayLeavesSearch", func(f *Fake) { f.ExhaustQuota(StatsPerDay) }, "search", 200, "", "", "", ""},
		{"keyInvalid", func(f *Fake) { f.BadKey(KeyInvalid) }, "videos", 400, "badRequest", "global", "API_KEY_INVALID", "API key not valid"},
		{"keyInvalidLegacy", func(f *Fake) { f.BadKey(KeyInvalidLegacy) }, "videos", 400, "keyInvalid", "usageLimits", "", "Bad Request"},
		{"keyBlocked", func(f *Fake) { f.BadKey(KeyBlocked) }, "videos", 403, "forbidden", "global", "API_KEY_SERVICE_BLOCKED", "blocked"},
		{"accessNotConfigured", func(f *Fake) { f.BadKey(KeyNotConfigured) }, "videos", 403, "accessNotConfigured", "usageLimits", "SERVICE_DISABLED", "disabled"},
		{"noChart", func(f *Fake) { f.NoChart("US") }, "videos", 400, "videoChartNotFound", "youtube.video", "", "chart"},
		{"500", func(f *Fake) { f.FailNext(1, 500) }, "videos", 500, "backendError", "global", "", "Backend Error"},
		{"503", func(f *Fake) { f.FailNext(1, 503) }, "videos", 503, "backendError", "global", "", "unavailable"},
		{"429perMinute", func(f *Fake) { f.FailNext(1, 429) }, "search", 429, "rateLimitExceeded", "global", "", "per minute"},
		{"dailyCap", func(f *Fake) {
			f.SetDailyQuota(1)
			f.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/youtube/v3/videos?key="+key, nil))
		},
			"videos", 403, "quotaExceeded", "youtube.quota", "", "quota"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			tc.setup(fx.fake)
			q := chartQuery("US", "")
			switch tc.path {
			case "search":
				q = "key=" + key + "&part=id&type=video&q=football&regionCode=US"
			case "videos:batchGetStats":
				q = "key=" + key + "&part=statistics&id=x"
			}
			status, b := fx.get(t, "/youtube/v3/"+tc.path, q)
			if status != tc.status {
				t.Fatalf("status = %d, want %d: %s", status, tc.status, b)
			}
			if tc.status == 200 {
				return
			}
			e := decodeErr(t, b)
			if e.Error.Code != tc.status || e.Error.Errors[0].Reason != tc.reason || e.Error.Errors[0].Domain != tc.domain {
				t.Errorf("got code %d reason %q domain %q, want %d %q %q", e.Error.Code, e.Error.Errors[0].Reason, e.Error.Errors[0].Domain, tc.status, tc.reason, tc.domain)
			}
			if !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("message %q does not contain %q", e.Error.Message, tc.msg)
			}
			if tc.detail != "" && (len(e.Error.Details) == 0 || e.Error.Details[0]["reason"] != tc.detail) {
				t.Errorf("details = %v, want ErrorInfo %s", e.Error.Details, tc.detail)
			}
		})
	}
}

func TestClearFaults(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.fake.ExhaustQuota(QuotaExceeded)
	fx.fake.NoChart("US")
	fx.fake.BadKey(KeyBlocked)
	fx.fake.ClearFaults()
	if status, b := fx.get(t, "/youtube/v3/videos", chartQuery("US", "")); status != 200 {
		t.Errorf("after ClearFaults: %d %s", status, b)
	}
}

func TestFailNextBurst(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.fake.FailNext(2, 503)
	var got []int
	for i := 0; i < 3; i++ {
		s, _ := fx.get(t, "/youtube/v3/videos", chartQuery("US", ""))
		got = append(got, s)
	}
	if got[0] != 503 || got[1] != 503 || got[2] != 200 {
		t.Errorf("statuses = %v, want [503 503 200]", got)
	}
	if c := fx.fake.Charged(key); c != 3 {
		t.Errorf("charged %d, want 3 (failed calls cost too)", c)
	}
}

func TestPageTokens(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	_, b := fx.get(t, "/youtube/v3/videos", chartQuery("US", ""))
	tok := decode(t, b).NextPageToken
	cases := []struct {
		name, region, token string
		invalidate          bool
	}{
		{"other region", "GB", tok, false},
		{"tampered", "US", tok[:len(tok)-2] + "AA", false},
		{"garbage", "US", "50", false},
		{"invalidated", "US", tok, true},
	}
	for _, tc := range cases {
		if tc.invalidate {
			fx.fake.InvalidateTokens()
		}
		status, b := fx.get(t, "/youtube/v3/videos", chartQuery(tc.region, tc.token))
		if status != 400 || decodeErr(t, b).Error.Errors[0].Reason != "invalidPageToken" {
			t.Errorf("%s: %d %s, want 400 invalidPageToken", tc.name, status, b)
		}
	}
	// After invalidation, fresh tokens work again.
	_, b = fx.get(t, "/youtube/v3/videos", chartQuery("US", ""))
	if status, b := fx.get(t, "/youtube/v3/videos", chartQuery("US", decode(t, b).NextPageToken)); status != 200 {
		t.Errorf("fresh token after invalidation: %d %s", status, b)
	}
}

func TestMalformNext(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.fake.MalformNext(1)
	status, b := fx.get(t, "/youtube/v3/videos", chartQuery("US", ""))
	if status != 200 || json.Valid(b) {
		t.Errorf("malformed: status %d, valid JSON %v", status, json.Valid(b))
	}
	if _, b = fx.get(t, "/youtube/v3/videos", chartQuery("US", "")); !json.Valid(b) {
		t.Errorf("second response still malformed")
	}
}

func searchAll(t *testing.T, fx *fixture, v url.Values) []string {
	t.Helper()
	v.Set("key", key)
	v.Set("maxResults", "50")
	var ids []string
	for token := ""; ; {
		v.Set("pageToken", token)
		status, b := fx.get(t, "/youtube/v3/search", v.Encode())
		if status != 200 {
			t.Fatalf("search: %d %s", status, b)
		}
		l := decode(t, b)
		for _, it := range l.Items {
			ids = append(ids, it["id"].(map[string]any)["videoId"].(string))
		}
		if token = l.NextPageToken; token == "" {
			return ids
		}
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	base := func() url.Values {
		return url.Values{"part": {"snippet"}, "type": {"video"}, "regionCode": {"US"}, "order": {"viewCount"}}
	}
	all := searchAll(t, fx, base())
	if len(all) <= 50 {
		t.Fatalf("US search corpus has %d videos, want several pages", len(all))
	}
	v := base()
	v.Set("q", "football")
	football := searchAll(t, fx, v)
	if len(football) == 0 || len(football) >= len(all) {
		t.Errorf("q=football: %d of %d", len(football), len(all))
	}
	v = base()
	v.Set("publishedAfter", Anchor.AddDate(0, -3, 0).Format(time.RFC3339))
	v.Set("publishedBefore", Anchor.AddDate(0, -1, 0).Format(time.RFC3339))
	windowed := searchAll(t, fx, v)
	if len(windowed) == 0 || len(windowed) >= len(all) {
		t.Errorf("window: %d of %d", len(windowed), len(all))
	}
	after, before := Anchor.AddDate(0, -3, 0), Anchor.AddDate(0, -1, 0)
	var prev uint64 = 1 << 63
	for _, id := range windowed {
		vd := fx.fake.fx.byID[id]
		if vd.PublishedAt.Before(after) || !vd.PublishedAt.Before(before) {
			t.Errorf("%s published %s outside the window", id, vd.PublishedAt)
		}
		if vd.Views > prev {
			t.Errorf("not ordered by viewCount")
		}
		prev = vd.Views
	}
	v = base()
	v.Set("regionCode", "DE")
	v.Set("q", "muller")
	if len(searchAll(t, fx, v)) == 0 {
		t.Errorf("q=muller finds no Müller in DE")
	}
	// 2026: one call of the search bucket each, nothing of the default one.
	want := map[string]int64{BucketSearch: fx.fake.Requests()}
	if got := fx.fake.ChargedBuckets(key); !maps.Equal(got, want) {
		t.Errorf("search charged %v, want %v", got, want)
	}
}

func TestAccounting(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.get(t, "/youtube/v3/videos", chartQuery("US", ""))
	fx.get(t, "/youtube/v3/videoCategories", "part=snippet&regionCode=US&key="+key)
	fx.get(t, "/youtube/v3/i18nRegions", "part=snippet&key="+key)
	fx.get(t, "/youtube/v3/search", "part=id&type=video&key="+key)
	fx.get(t, "/youtube/v3/videos:batchGetStats", "part=statistics&id=a&key="+key)
	fx.fake.ExhaustQuota(QuotaExceeded)
	fx.get(t, "/youtube/v3/search", "part=id&type=video&key="+key)
	wantOps := map[string]int64{ingest.OpVideosList: 1, ingest.OpCategoriesList: 1, ingest.OpRegionsList: 1,
		ingest.OpSearchList: 2, ingest.OpBatchGetStats: 1}
	if got := fx.fake.ChargedByOp(key); !maps.Equal(got, wantOps) {
		t.Errorf("ChargedByOp = %v, want %v", got, wantOps)
	}
	wantBuckets := map[string]int64{BucketDefault: 3, BucketSearch: 2, BucketStats: 1}
	if got := fx.fake.ChargedBuckets(key); !maps.Equal(got, wantBuckets) {
		t.Errorf("ChargedBuckets = %v, want %v", got, wantBuckets)
	}
	if c := fx.fake.Charged(key); c != 6 {
		t.Errorf("Charged = %d, want 6", c)
	}
	if r := fx.fake.Requests(); r != 6 {
		t.Errorf("Requests = %d, want 6", r)
	}
}

func TestCategoriesAndVideosByID(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	status, b := fx.get(t, "/youtube/v3/videoCategories", "part=snippet&regionCode=FR&key="+key)
	if l := decode(t, b); status != 200 || len(l.Items) < 10 || l.Kind != "youtube#videoCategoryListResponse" {
		t.Errorf("categories: %d %s", status, b)
	}
	_, b = fx.get(t, "/youtube/v3/videos", chartQuery("BR", ""))
	var ids []string
	for _, it := range decode(t, b).Items[:5] {
		ids = append(ids, it["id"].(string))
	}
	_, b = fx.get(t, "/youtube/v3/videos", "part=snippet,statistics&key="+key+"&id="+strings.Join(append(ids, "nonexistent1"), ","))
	l := decode(t, b)
	if len(l.Items) != 5 {
		t.Fatalf("videos by id: %d items, want 5", len(l.Items))
	}
	for i, it := range l.Items {
		if it["id"] != ids[i] {
			t.Errorf("item %d = %v, want %s", i, it["id"], ids[i])
		}
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.fake.SetLatency(time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", fx.srv.URL+"/youtube/v3/videos?"+chartQuery("US", ""), nil)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("answered %d despite an hour of latency", res.StatusCode)
	}
	fx.fake.SetLatency(0)
	if status, _ := fx.get(t, "/youtube/v3/videos", chartQuery("US", "")); status != 200 {
		t.Errorf("after SetLatency(0): %d", status)
	}
}

// TestServesEveryOperation: every operation of the registry has a handler
// and is served at its path, so that a new operation cannot reach the
// worker's client without the fake answering it.
func TestServesEveryOperation(t *testing.T) {
	fx := newFixture(t)
	for _, op := range ingest.Operations {
		if handlers[op.Name] == nil {
			t.Errorf("%s: no handler", op.Name)
			continue
		}
		if status, body := fx.get(t, basePath+op.Path, "key="+key); status == http.StatusNotFound {
			t.Errorf("%s: GET %s%s answered 404: %s", op.Name, basePath, op.Path, body)
		}
	}
	if len(handlers) != len(ingest.Operations) {
		t.Errorf("%d handlers for %d operations", len(handlers), len(ingest.Operations))
	}
}

// videoCategories.list answers hl as the upstream does: the titles in a
// language it knows, by its primary subtag, and English for any other
// language or none; the ids and their order stay the same.
func TestCategoriesInTheLanguageAsked(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	titles := func(hl string) (ids, out []string) {
		t.Helper()
		_, b := fx.get(t, "/youtube/v3/videoCategories", "part=snippet&regionCode=DE&hl="+hl+"&key="+key)
		for _, it := range decode(t, b).Items {
			ids = append(ids, it["id"].(string))
			out = append(out, it["snippet"].(map[string]any)["title"].(string))
		}
		return ids, out
	}
	enIDs, en := titles("")
	for hl, want := range map[string]string{"de": "Musik", "de_DE": "Musik", "ja-JP": "音楽", "en_US": "Music", "xx": "Music"} {
		ids, got := titles(hl)
		if !slices.Equal(ids, enIDs) {
			t.Errorf("hl=%s: ids %v, want the same as without hl %v", hl, ids, enIDs)
		}
		if i := slices.Index(ids, "10"); i < 0 || got[i] != want {
			t.Errorf("hl=%s: category 10 titled %v, want %q", hl, got, want)
		}
	}
	if i := slices.Index(enIDs, "10"); en[i] != "Music" {
		t.Errorf("no hl: category 10 titled %q, want the English Music", en[i])
	}
	for lang, ts := range categoryTitles {
		if len(ts) != len(categories) {
			t.Errorf("categoryTitles[%s] holds %d titles, categories %d", lang, len(ts), len(categories))
		}
	}
}

// SwapBetweenPages moves the chart once its first page is served: the
// video at rank 10 is served again at 55 on the second page, and the one
// that was at 55 on no page.
func TestSwapBetweenPages(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	ids := func(token string) ([]string, string) {
		status, b := fx.get(t, "/youtube/v3/videos", chartQuery("US", token))
		if status != 200 {
			t.Fatalf("status %d: %s", status, b)
		}
		l := decode(t, b)
		var out []string
		for _, it := range l.Items {
			out = append(out, it["id"].(string))
		}
		return out, l.NextPageToken
	}
	still, token := ids("")
	rest, _ := ids(token)
	fx.fake.SwapBetweenPages("US", 10, 55)
	first, token := ids("")
	second, _ := ids(token)
	if first[9] != still[9] || second[4] != still[9] {
		t.Errorf("rank 55 after the first page: %s, want %s, the first page's rank 10", second[4], still[9])
	}
	for _, id := range append(first, second...) {
		if id == rest[4] {
			t.Errorf("%s, at rank 55 before the move, was served", id)
		}
	}
}
