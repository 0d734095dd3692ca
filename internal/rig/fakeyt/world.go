package fakeyt

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ExtraRegions have handcrafted charts in the scripts real charts carry
// beside the default regions: Japanese, Korean, Chinese (Taiwan), Arabic
// (Saudi Arabia) and Thai, with the text shapes of real captures. They are
// not default regions (regions.Default), so tests that walk every default
// region are unchanged; the catalogue's other regions are generated
// (catalogue.go).
var ExtraRegions = []string{"JP", "KR", "TW", "SA", "TH"}

// extraLengths are the extra charts' lengths: JP's second page and TH's
// only page hold 49 items, as real pages sometimes do.
var extraLengths = map[string]int{"JP": 99, "KR": 60, "TW": 55, "SA": 52, "TH": 49}

// shape is a hand-written chart item with the text shapes real captures
// show: emoji past U+1F900 glued to words, ❤️ (with U+FE0F) before a word,
// ZWJ sequences, text without spaces, nukta letters as the API sends them
// (U+095C), live and upcoming broadcasts (duration P0D), no tags, long
// descriptions, region restrictions.
type shape struct {
	id, region, lang, title, desc, channel string
	tags                                   []string // nil: the item has no tags
	// live is liveBroadcastContent: "live", "upcoming" or "" (none).
	live string
	// blocked lists the regions where the video cannot be watched.
	blocked []string
	// noStats: the item carries no statistics at all.
	noStats bool
}

// longDescription is over 2,000 characters, as many real descriptions are.
var longDescription = "नई साड़ी कलेक्शन 2026 – पूरी जानकारी नीचे।\n\n" +
	strings.Repeat("Shop the full festive collection: silk, cotton and georgette sarees, lehengas and kurtas. Free delivery across India. 🛍️ ", 20) +
	"\n\n#saree #साड़ी #fashion"

var shapes = []shape{
	{id: "jp-yakitori", region: "JP", lang: "ja", title: "【公式】東京の焼鳥屋さんを巡る🤩", desc: "居酒屋めぐり第3弾。焼鳥と日本酒。",
		channel: "グルメ散歩", tags: []string{"焼鳥", "東京", "グルメ"}},
	{id: "jp-firstlive", region: "JP", lang: "ja", title: "最初のライブ配信！ありがとう❤️みんな", desc: "初めての生配信です。",
		channel: "ミクの部屋", live: "live", noStats: true},
	{id: "jp-premiere", region: "JP", lang: "ja", title: "新曲プレミア公開👨‍👩‍👧 家族の歌", desc: "20時からプレミア公開。",
		channel: "ミクの部屋", tags: []string{"新曲"}, live: "upcoming"},
	{id: "jp-ramen", region: "JP", lang: "ja", title: "ﾗｰﾒﾝ特集 深夜の一杯🍜", desc: "半角カナのタイトル。", channel: "夜食TV"},
	{id: "tw-ramen", region: "TW", lang: "zh-Hant", title: "🤩拉麵 台南美食之旅", desc: "台南小吃一日遊，牛肉湯、拉麵、豆花。",
		channel: "吃貨日記", tags: []string{"台南", "美食"}},
	{id: "tw-night", region: "TW", lang: "zh-Hant", title: "台北夜市必吃20攤🫶", desc: "士林夜市。", channel: "吃貨日記"},
	{id: "kr-mukbang", region: "KR", lang: "ko", title: "서울에서 먹방🥹 떡볶이 10인분", desc: "오늘은 서울 맛집 투어!",
		channel: "먹방왕", tags: []string{"먹방", "서울"}},
	{id: "kr-mv", region: "KR", lang: "ko", title: "[MV] 새로운 노래 👩‍❤️‍👨 사랑", desc: "뮤직비디오", channel: "K-POP Official",
		tags: []string{"kpop", "MV"}, blocked: []string{"CN"}},
	{id: "th-wolf", region: "TH", lang: "th", title: "หมาป่าในป่าใหญ่🐺 สารคดี", desc: "สารคดีสัตว์ป่า", channel: "ช่องสารคดี"},
	{id: "th-news", region: "TH", lang: "th", title: "ข่าวด่วน ❤️ประเทศไทย วันนี้", desc: "ถ่ายทอดสด", channel: "ข่าวไทย",
		live: "live"},
	{id: "sa-majnoon", region: "SA", lang: "ar", title: "مجنون🤯 الحلقة الأولى", desc: "برنامج كوميدي جديد", channel: "قناة الضحك",
		tags: []string{"كوميديا"}},
	{id: "sa-derby", region: "SA", lang: "ar", title: "مباراة الهلال والنصر ⚽ ملخص", desc: "أهداف المباراة", channel: "رياضة"},
	{id: "in-saree", region: "IN", lang: "hi", title: "नई सा\u095cी कलेक्शन 2026 | 1 Crore🤑 Sale", desc: longDescription,
		channel: "साड़ी घर", tags: []string{"साड़ी", "saree"}, blocked: []string{"PK"}},
	{id: "in-tamil", region: "IN", lang: "ta", title: "தமிழ் பாடல் 2026 ❤️ காதல்", desc: "புதிய தமிழ் பாடல்", channel: "Tamil Hits"},
	{id: "in-home", region: "IN", lang: "hi", title: "Welcome Home🤴 | Bigg Boss ब\u095dा धमाका", desc: "आज रात 9 बजे", channel: "Colors TV",
		live: "upcoming"},
	{id: "in-noTags", region: "IN", lang: "en", title: "Cricket LIVE: India vs Australia", desc: "Ball by ball.", channel: "Star Sports",
		live: "live"},
	// Upstream text is data, never markup: the dashboard's browser test
	// looks for this title shown literally, with no script run.
	{id: "us-hostile", region: "US", lang: "en", title: `Prank <script>window.__xss=1</script> "><img src=x onerror="window.__xss=2"> reveal`,
		desc: `</textarea><svg onload="window.__xss=3"> & 'quotes'`, channel: `<b>Bold</b> Channel`, tags: []string{"<i>prank</i>"}},
}

// shapeVideos returns the hand-written items of region, published just
// before Anchor and viewed enough to sit near the top of its chart.
func shapeVideos(region string) []*video {
	var out []*video
	for i, s := range shapes {
		if s.region != region {
			continue
		}
		v := &video{ID: videoID("shape/"+s.id, 0), Title: s.title, Description: s.desc, Tags: s.tags,
			ChannelID:    "UC" + videoID("channel/"+s.channel, 0) + videoID("channel2/"+s.channel, 0),
			ChannelTitle: s.channel, CategoryID: "24", Lang: s.lang,
			PublishedAt: Anchor.Add(-time.Duration(i+2) * time.Hour), Duration: "PT8M2S",
			Views: uint64(30_000_000 - i*100_000), Likes: uint64(900_000 - i*1000), Comments: uint64(20_000 - i*10),
			Live: s.live, Blocked: s.blocked, NoStats: s.noStats}
		if s.live != "" {
			v.Duration = "P0D"
		}
		out = append(out, v)
	}
	return out
}

// worldLangs are the extra regions' generated titles, to fill their charts.
var worldLangs = map[string][]string{
	"JP": {"今日の%[1]sニュース", "%[1]sで一番おいしい店", "【検証】%[1]sを100時間やってみた"},
	"KR": {"%[1]s 브이로그", "오늘의 %[1]s 뉴스", "%[1]s 리뷰 #%[2]d"},
	"TW": {"%[1]s開箱", "今天的%[1]s新聞", "%[1]s挑戰第%[2]d集"},
	"SA": {"أخبار %[1]s اليوم", "تحدي %[1]s الحلقة %[2]d"},
	"TH": {"รีวิว%[1]s", "ข่าว%[1]sวันนี้", "%[1]sตอนที่ %[2]d"},
}

var worldFillers = map[string][]string{
	"JP": {"東京", "大阪", "ゲーム", "猫", "寿司"},
	"KR": {"서울", "부산", "게임", "고양이", "김치"},
	"TW": {"台北", "高雄", "遊戲", "貓咪", "珍珠奶茶"},
	"SA": {"الرياض", "جدة", "الألعاب", "القطط"},
	"TH": {"กรุงเทพ", "เชียงใหม่", "เกม", "แมว"},
}

// worldChart builds an extra region's chart: its hand-written items, then
// generated ones in its language.
func (f *fixtures) worldChart(region string) []*video {
	out := shapeVideos(region)
	titles, fillers := worldLangs[region], worldFillers[region]
	for i := 0; len(out) < extraLengths[region]; i++ {
		r := newRand(region, i)
		title := fmt.Sprintf(titles[r.IntN(len(titles))], fillers[r.IntN(len(fillers))], 1+r.IntN(40))
		channel := fillers[r.IntN(len(fillers))] + " TV"
		views := uint64(1000 + r.IntN(20_000_000))
		out = append(out, &video{ID: videoID(region, i), Title: title, Description: title,
			Tags: []string{fillers[r.IntN(len(fillers))]}, ChannelTitle: channel,
			ChannelID:  "UC" + videoID("channel/"+channel, 0) + videoID("channel2/"+channel, 0),
			CategoryID: "24", PublishedAt: Anchor.Add(-time.Duration(1+r.IntN(45*24)) * time.Hour).Truncate(time.Second),
			Duration: durations[r.IntN(len(durations))], Views: views, Likes: views / 40, Comments: views / 400})
	}
	for _, v := range out {
		f.add(v)
	}
	return out
}

// withShapes puts a default region's hand-written items at the top of its
// chart in place of its last generated ones (never a global hit), so its
// length is unchanged.
func (f *fixtures) withShapes(region string, chart []*video) []*video {
	extra := shapeVideos(region)
	if len(extra) == 0 {
		return chart
	}
	for _, v := range extra {
		f.add(v)
	}
	global := map[string]bool{}
	for i := range globalHits {
		global[videoID("global", i)] = true
	}
	drop := len(extra)
	kept := make([]*video, 0, len(chart))
	for i := len(chart) - 1; i >= 0; i-- {
		if drop > 0 && !global[chart[i].ID] {
			drop--
			continue
		}
		kept = append(kept, chart[i])
	}
	slices.Reverse(kept)
	return append(extra, kept...)
}
