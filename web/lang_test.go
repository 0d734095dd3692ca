package web

import "testing"

// TestLangOf: each string is marked with the language its letters and the
// region whose chart shows it say, the owner's tag believed unless the
// script gainsays it, and nothing when neither says.
func TestLangOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text, region, tag, want string
	}{
		{"Han in Taiwan", "今天的高雄新聞", "TW", "", "zh-Hant"},
		{"Han in Hong Kong", "香港天氣", "HK", "", "zh-Hant"},
		{"Han in mainland China", "今天的新闻", "CN", "", "zh-Hans"},
		{"Han in Singapore", "新加坡新闻", "SG", "", "zh-Hans"},
		{"Han in Japan", "東京事変", "JP", "", "ja"},
		{"Han elsewhere", "周杰倫", "US", "", "zh"},
		{"Han and Latin in Taiwan", "【MV】周杰倫 Jay Chou 最偉大的作品", "TW", "", "zh-Hant"},
		{"Han and kana anywhere", "今日のニュース", "TW", "", "ja"},
		{"kana alone", "ドラえもん", "US", "", "ja"},
		{"Hangul", "뉴진스 NewJeans", "US", "", "ko"},
		{"Hangul with Han", "大韓民國 뉴스", "KR", "", "ko"},
		{"Thai", "ข่าวเช้า", "TH", "", "th"},
		{"Thai outside Thailand", "ข่าวเช้า", "US", "", "th"},
		{"Arabic in Saudi Arabia", "أخبار اليوم", "SA", "", "ar"},
		{"Arabic script in Iran", "اخبار امروز", "IR", "", "fa"},
		{"Arabic script in Pakistan", "آج کی خبریں", "PK", "", "ur"},
		{"Arabic script elsewhere", "أخبار اليوم", "US", "", "ar"},
		{"Hebrew", "חדשות", "US", "", "he"},
		{"Cyrillic in Ukraine", "Новини дня", "UA", "", "uk"},
		{"Cyrillic outside a Cyrillic region", "Новости", "US", "", ""},
		{"Devanagari in India", "आज की ख़बरें", "IN", "", "hi"},
		{"Latin in the United States", "Evening news", "US", "", "en"},
		{"Latin in France", "Le journal", "FR", "", "fr"},
		{"Latin in Japan", "Official Music Video", "JP", "", ""},
		{"Latin in Saudi Arabia", "Official Video", "SA", "", ""},
		{"no letters", "2026 !!! 🎉", "TW", "", ""},
		{"no letters, a tag", "🎉🎉", "US", "es", "es"},
		{"a tag for a Latin title", "Tum Hi Ho", "US", "hi", "hi"},
		{"a regional tag kept", "Evening news", "US", "en-GB", "en-GB"},
		{"a Chinese tag takes the region's script", "今天的新聞", "TW", "zh", "zh-Hant"},
		{"a Chinese tag with its region kept", "今天的新闻", "TW", "zh-CN", "zh-CN"},
		{"a Japanese tag on Han", "東京", "TW", "ja", "ja"},
		{"an English tag on Han is gainsaid", "今天的高雄新聞", "TW", "en", "zh-Hant"},
		{"an English tag on Thai is gainsaid", "ข่าวเช้า", "TH", "en", "th"},
		{"no words (zxx) is no tag", "今天的新聞", "HK", "zxx", "zh-Hant"},
		{"a malformed tag is no tag", "Le journal", "FR", "x_y", "fr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := langOf(c.text, c.region, c.tag); got != c.want {
				t.Errorf("langOf(%q, %q, %q) = %q, want %q", c.text, c.region, c.tag, got, c.want)
			}
		})
	}
}

// TestLangKey: a tab gathers a language's regional tags under its base,
// and Chinese under its script.
func TestLangKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ lang, want string }{
		{"", ""}, {"en-GB", "en"}, {"hi-IN", "hi"}, {"ja", "ja"}, {"zh-Hant", "zh-Hant"},
		{"zh-TW", "zh-Hant"}, {"zh-CN", "zh-Hans"}, {"zh", "zh"},
	} {
		if got := langKey(c.lang); got != c.want {
			t.Errorf("langKey(%q) = %q, want %q", c.lang, got, c.want)
		}
	}
}

// TestLangOfKeptAsFound: an answer langOf keeps is the one it would find
// again, for the same text asked on another region's chart or with
// another tag as well, and kept text stays within its bound.
func TestLangOfKeptAsFound(t *testing.T) {
	t.Parallel()
	asked := []langAsked{
		{"周杰倫 最偉大的作品", "TW", ""}, {"周杰倫 最偉大的作品", "CN", ""}, {"周杰倫 最偉大的作品", "JP", ""},
		{"周杰倫 最偉大的作品", "US", "en"}, {"Despacito", "MX", ""}, {"Despacito", "MX", "es"},
		{"Despacito", "US", ""}, {"Привет мир", "RU", ""}, {"Привет мир", "UA", "uk"}, {"", "US", "fr"},
		{"ข่าววันนี้", "TH", "en"}, {"Ελλάδα 2026", "GR", ""},
	}
	for round := range 2 {
		for _, k := range asked {
			if got, want := langOf(k.text, k.region, k.tag), findLang(k.text, k.region, k.tag); got != want {
				t.Errorf("round %d: langOf(%q, %s, %q) = %q, found %q", round, k.text, k.region, k.tag, got, want)
			}
		}
	}
	var m langMemo
	long := string(make([]byte, langMemoBytes/128))
	for i := range 200 {
		m.put(langAsked{long + string(rune('a'+i%26)) + string(rune('a'+i/26)), "US", ""}, "en")
	}
	if m.bytes > langMemoBytes {
		t.Errorf("the memo keeps %d bytes of text, over its bound of %d", m.bytes, langMemoBytes)
	}
}
