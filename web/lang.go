package web

// The language a string of the upstream's is marked with on a page and in
// a feed: a title, a channel's name, a tag. Browsers draw Han characters
// in the forms of the language an element says (a Chinese title left to
// the page's English or marked Japanese is drawn in Japanese forms), and
// screen readers speak by it, so each string says its own, found from the
// scripts of its letters and the region whose chart shows it.

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
)

// scripts are the writing systems whose letters name their string's
// language (alone, or with the region), each with its ISO 15924 code.
// Latin, Cyrillic and Devanagari serve many languages: the region alone
// names which (ambiguous says so).
var scripts = []struct {
	code      string
	table     *unicode.RangeTable
	ambiguous bool
}{
	{"Hani", unicode.Han, false}, {"Kana", unicode.Hiragana, false}, {"Kana", unicode.Katakana, false},
	{"Hang", unicode.Hangul, false}, {"Thai", unicode.Thai, false}, {"Arab", unicode.Arabic, false},
	{"Hebr", unicode.Hebrew, false}, {"Grek", unicode.Greek, false}, {"Geor", unicode.Georgian, false},
	{"Armn", unicode.Armenian, false}, {"Beng", unicode.Bengali, false}, {"Taml", unicode.Tamil, false},
	{"Telu", unicode.Telugu, false}, {"Gujr", unicode.Gujarati, false}, {"Guru", unicode.Gurmukhi, false},
	{"Knda", unicode.Kannada, false}, {"Mlym", unicode.Malayalam, false}, {"Sinh", unicode.Sinhala, false},
	{"Khmr", unicode.Khmer, false}, {"Laoo", unicode.Lao, false}, {"Mymr", unicode.Myanmar, false},
	{"Ethi", unicode.Ethiopic, false}, {"Cyrl", unicode.Cyrillic, true}, {"Deva", unicode.Devanagari, true},
	{"Latn", unicode.Latin, true},
}

// scriptIndex is the index in scripts of a letter's script, -1 for none
// listed; an ASCII letter is Latin without a look through the tables.
func scriptIndex(r rune) int {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return latin
		}
		return -1
	}
	for i, s := range scripts {
		if unicode.Is(s.table, r) {
			return i
		}
	}
	return -1
}

// latin is Latin's index in scripts.
var latin = func() int {
	for i, s := range scripts {
		if s.code == "Latn" {
			return i
		}
	}
	panic("no Latin in scripts")
}()

// mainScript is the script a text is in: kana make it Japanese and
// Hangul Korean whatever else it holds; else Han; else the script with
// the most letters, Latin only when no other script has any (a title's
// Latin is mostly a name or a tag beside its own language's words); ""
// when it has no letter.
func mainScript(text string) string {
	var byIndex [32]int
	for _, r := range text {
		if i := scriptIndex(r); i >= 0 {
			byIndex[i]++
		}
	}
	count := make(map[string]int, 4)
	for i, n := range byIndex[:len(scripts)] {
		if n > 0 {
			count[scripts[i].code] += n
		}
	}
	for _, s := range []string{"Kana", "Hang", "Hani"} {
		if count[s] > 0 {
			return s
		}
	}
	best := ""
	for _, s := range scripts {
		if s.code != "Latn" && count[s.code] > count[best] {
			best = s.code
		}
	}
	if best == "" && count["Latn"] > 0 {
		return "Latn"
	}
	return best
}

// langOf is the lang attribute of text shown on region's chart, given
// the owner's tag for it ("" none). The tag is believed when the text is
// Latin (a name, a romanized lyric may be any language's) or its
// language is written in the text's script, a Chinese tag with no script
// taking the region's (zh-Hant in Taiwan); a Han or Thai title tagged
// "en" is not English, and then, as without a tag, the script and the
// region say (scriptLang). "" means not known: the element keeps the
// page's, with dir="auto".
func langOf(text, region, tag string) string {
	k := langAsked{text, region, tag}
	if l, ok := langs.get(k); ok {
		return l
	}
	l := findLang(text, region, tag)
	langs.put(k, l)
	return l
}

// findLang is langOf, found.
func findLang(text, region, tag string) string {
	script := mainScript(text)
	if t, ok := ownerTag(tag); ok && (script == "" || script == "Latn" || writtenIn(t, script)) {
		return withScript(t, region).String()
	}
	return scriptLang(script, region)
}

// scriptLang is the language text in script says on region's chart: Han
// as Traditional Chinese in Taiwan and Hong Kong, Simplified in mainland
// China and Singapore, Japanese in Japan, Chinese elsewhere; kana as
// Japanese; a script of many languages (Latin) as the region's own
// language when it is written in it, else none; any other as the
// region's language written in it, else the script's first.
func scriptLang(script, region string) string {
	if script == "" {
		return ""
	}
	home := language.Make("und-" + region)
	homeBase, _ := home.Base()
	homeScript, _ := home.Script()
	switch script {
	case "Kana":
		return "ja"
	case "Hani":
		switch {
		case homeBase.String() == "zh":
			return "zh-" + homeScript.String()
		case homeBase.String() == "ja":
			return "ja"
		case simplified[region]:
			return "zh-Hans"
		}
		return "zh"
	}
	if region != "" && homeScript.String() == script {
		return homeBase.String()
	}
	if ambiguous(script) {
		return ""
	}
	base, _ := language.Make("und-" + script).Base()
	return base.String()
}

// simplified are the regions whose Chinese is written in Simplified
// characters though Chinese is not their first language.
var simplified = map[string]bool{"SG": true, "MY": true}

// ownerTag is the owner's tag as a language, when it names one: not
// "zxx" (no words) nor "und".
func ownerTag(tag string) (language.Tag, bool) {
	if tag == "" || tag == "zxx" || tag == "und" {
		return language.Und, false
	}
	t, err := language.Parse(tag)
	if _, conf := t.Base(); err != nil || conf == language.No {
		return language.Und, false
	}
	return t, true
}

// writtenIn reports whether t's language is written in script: Japanese
// in Han and kana, Korean in Han and Hangul, any other in the script its
// tag gives or its likely one.
func writtenIn(t language.Tag, script string) bool {
	base, _ := t.Base()
	switch {
	case base.String() == "ja" && (script == "Hani" || script == "Kana"):
		return true
	case base.String() == "ko" && (script == "Hani" || script == "Hang"):
		return true
	case base.String() == "zh":
		return script == "Hani"
	}
	s, _ := t.Script()
	return s.String() == script
}

// withScript is a Chinese tag with no script named given the region's
// (zh in Taiwan: zh-Hant), since the two scripts want their own glyphs;
// any other tag as it is.
func withScript(t language.Tag, region string) language.Tag {
	base, _ := t.Base()
	if base.String() != "zh" || hasScript(t) {
		return t
	}
	home := language.Make("und-" + region)
	if b, _ := home.Base(); b.String() != "zh" {
		return t
	}
	s, _ := home.Script()
	out, err := language.Compose(base, s)
	if err != nil {
		return t
	}
	return out
}

// hasScript reports whether t names its script, or a region that says
// it (zh-TW, zh-CN).
func hasScript(t language.Tag) bool {
	_, conf := t.Script()
	if conf == language.Exact {
		return true
	}
	_, rconf := t.Region()
	return rconf == language.Exact
}

func ambiguous(script string) bool {
	for _, s := range scripts {
		if s.code == script {
			return s.ambiguous
		}
	}
	return true
}

// langKey is the language a tab of a chart gathers a lang under: its base
// language, and its script for Chinese (zh-Hant, zh-Hans); "" none.
func langKey(lang string) string {
	if lang == "" {
		return ""
	}
	t, err := language.Parse(lang)
	if err != nil {
		return ""
	}
	base, _ := t.Base()
	if base.String() != "zh" {
		return base.String()
	}
	if s, conf := t.Script(); conf != language.No && hasScript(t) {
		return "zh-" + s.String()
	}
	return "zh"
}

// langAsked is what langOf is asked: its answer depends on nothing else.
type langAsked struct{ text, region, tag string }

// langMemo keeps langOf's answers, so that a page built again (a chart's
// titles are the same from one build to the next) finds each one without
// reading its letters or parsing its tag again. It holds at most
// langMemoBytes of text, emptied whole when full.
type langMemo struct {
	mu    sync.Mutex
	m     map[langAsked]string
	bytes int
}

// langMemoBytes bounds the text langMemo keeps.
const langMemoBytes = 4 << 20

var langs langMemo

func (m *langMemo) get(k langAsked) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.m[k]
	return l, ok
}

func (m *langMemo) put(k langAsked, l string) {
	size := len(k.text) + len(k.region) + len(k.tag) + len(l)
	if size > langMemoBytes/64 {
		return // a long description: not kept, it would push out many titles
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || m.bytes+size > langMemoBytes {
		m.m, m.bytes = make(map[langAsked]string), 0
	}
	if _, ok := m.m[k]; !ok {
		m.m[k] = l
		m.bytes += size
	}
}
