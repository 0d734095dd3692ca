package web

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// scriptsServer serves the charts of Taiwan, Hong Kong, Japan, Korea, Saudi Arabia
// and Thailand, their titles, channels and tags in their own scripts and
// none with the owner's language tag, but one Taiwanese title tagged
// English by mistake; Saudi Arabia has a category's chart too.
func scriptsServer(t *testing.T) *httptest.Server {
	t.Helper()
	db := storetest.Open(t)
	t0 := time.Date(2026, 11, 27, 10, 47, 0, 0, time.UTC)
	v := func(id, title, channel string, tags ...string) ingest.Video {
		return ingest.Video{ID: id, Title: title, ChannelTitle: channel, ChannelID: "UC" + id, Tags: tags}
	}
	regionRun(t, db, "TW", "", t0, v("tw-1", "今天的高雄新聞", "高雄電視台", "新聞"),
		ingest.Video{ID: "tw-2", Title: "颱風動態", ChannelTitle: "氣象頻道", ChannelID: "UCtw-2", Language: "en"})
	regionRun(t, db, "HK", "", t0, v("hk-1", "香港天氣 今日", "香港電台"), v("hk-2", "【直播】立法會", "有線新聞"))
	regionRun(t, db, "JP", "", t0, v("jp-1", "今日のニュース", "ニュース局"), v("jp-2", "東京事変", "東京"), v("jp-3", "Official Video", "Label"))
	regionRun(t, db, "KR", "", t0, v("kr-1", "뉴진스 NewJeans", "하이브"))
	regionRun(t, db, "SA", "", t0, v("sa-1", "أخبار اليوم", "قناة"))
	regionRun(t, db, "SA", "10", t0, v("sa-m", "أغنية اليوم", "قناة")) // a category: its picker beside the region's, on a phone too
	regionRun(t, db, "TH", "", t0, v("th-1", "ข่าวเช้า", "ช่องข่าว"))
	s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.Func(func() time.Time { return t0.Add(time.Hour) })})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

// TestEveryStringItsLanguage: on each chart's page a title, its channel
// and the YouTube link's name carry the lang their script and region
// give (Han text in Taiwan as Traditional Chinese, whatever a wrong tag
// says), so a browser draws each in its own forms; a video's tags too;
// the Japanese chart offers a Japanese tab; the feed says xml:lang.
func TestEveryStringItsLanguage(t *testing.T) {
	t.Parallel()
	srv := scriptsServer(t)
	for _, c := range []struct{ region, id, title, channel, lang string }{
		{"TW", "tw-1", "今天的高雄新聞", "高雄電視台", "zh-Hant"},
		{"TW", "tw-2", "颱風動態", "氣象頻道", "zh-Hant"},
		{"JP", "jp-1", "今日のニュース", "ニュース局", "ja"},
		{"JP", "jp-2", "東京事変", "東京", "ja"},
		{"KR", "kr-1", "뉴진스 NewJeans", "하이브", "ko"},
		{"SA", "sa-1", "أخبار اليوم", "قناة", "ar"},
		{"TH", "th-1", "ข่าวเช้า", "ช่องข่าว", "th"},
	} {
		r := row(t, string(fetch(t, srv.URL+"/charts/"+c.region)), c.id)
		for _, want := range []string{
			`<a class="title" href="/videos/` + c.id + `" lang="` + c.lang + `" dir="auto">` + c.title + `</a>`,
			`lang="` + c.lang + `" dir="auto">` + c.channel + `</a>`,
			`<span class="visually-hidden"><span lang="` + c.lang + `" dir="auto">` + c.title + `</span> on YouTube</span>`,
		} {
			if !strings.Contains(r, want) {
				t.Errorf("%s chart, %s: no %s in\n%s", c.region, c.id, want, r)
			}
		}
	}
	jp := string(fetch(t, srv.URL+"/charts/JP"))
	if r := row(t, jp, "jp-3"); strings.Contains(r, ` lang="`) || !strings.Contains(r, `dir="auto">Official Video</a>`) {
		t.Errorf("JP chart: a Latin title says a language, or lost dir=auto:\n%s", r)
	}
	if tabs := strings.Join(readTabs(t, jp), "\n"); !strings.Contains(tabs, "Japanese · 日本語 (2) /charts/JP?language=ja") || strings.Contains(tabs, "English") {
		t.Errorf("JP chart: tabs\n%s\nwant a Japanese one of 2 videos and no English one", tabs)
	}
	if page := string(fetch(t, srv.URL+"/charts/JP?language=ja")); !strings.Contains(page, "jp-1") || !strings.Contains(page, "jp-2") || strings.Contains(page, "jp-3") {
		t.Errorf("JP chart in Japanese: want jp-1 and jp-2 alone")
	}
	video := string(fetch(t, srv.URL+"/videos/tw-1"))
	for _, want := range []string{`<h1 class="video-title" lang="zh-Hant" dir="auto">今天的高雄新聞</h1>`, `<span class="tag" lang="zh-Hant" dir="auto">新聞</span>`} {
		if !strings.Contains(video, want) {
			t.Errorf("video page: no %s", want)
		}
	}
	feed := string(fetch(t, srv.URL+"/charts/TW/feed"))
	for _, want := range []string{`<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">`, `<title xml:lang="zh-Hant">今天的高雄新聞</title>`,
		`<author xml:lang="zh-Hant"><name>高雄電視台</name>`} {
		if !strings.Contains(feed, want) {
			t.Errorf("TW feed: no %s in\n%s", want, feed)
		}
	}
	if n := len(regexp.MustCompile(`lang=""`).FindAllString(jp, -1)); n != 0 {
		t.Errorf("JP chart: %d empty lang attributes, want none (no lang at all when none is known)", n)
	}
}
