package yeardb

import (
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// A lexicon is one language's words, most common first, and how they are
// joined: real titles in Japanese, Chinese and Thai have no spaces between
// words, so the index sees long runs it must split itself.
type lexicon struct {
	words []string
	cum   []float64 // cumulative Zipf weights of words
	sep   string
}

// word picks a word with Zipf's law: a few very common words, a long tail
// of rare ones, as in real chart text.
func (l *lexicon) word(r *rand.Rand) string {
	x := r.Float64() * l.cum[len(l.cum)-1]
	return l.words[sort.SearchFloat64s(l.cum, x)]
}

// phrase is n words of l joined as the language writes them.
func (l *lexicon) phrase(r *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = l.word(r)
	}
	return strings.Join(ws, l.sep)
}

// script makes one made-up word from a random source: syllables of a
// writing system, so that words look and normalize like real ones (accents
// to fold, vowel signs, nukta letters, Hangul blocks) without a word list.
type script func(r *rand.Rand) string

// langSpec is a language: its common real words (the head of its Zipf
// curve, so that searches for them find many videos), how many made-up
// words follow them, its script and its separator.
type langSpec struct {
	common []string
	size   int
	make   script
	sep    string
}

var langSpecs = map[string]langSpec{
	"en": {strings.Fields("official video music the live new football highlights full episode trailer vs game " +
		"world cup news today best song remix reaction challenge vlog goals match review part season final how"), 16000, latin(""), " "},
	"es": {strings.Fields("oficial video música en vivo nuevo fútbol goles capítulo reacción canción mejor"), 6000, latin("áéíóúñ"), " "},
	"de": {strings.Fields("offizielles Musikvideo Fußball Highlights Tore Folge neue Nachrichten heute größte Spaß"), 9000, latin("äöüß"), " "},
	"fr": {strings.Fields("clip officiel football résumé buts épisode nouveau actualité été réaction chanson"), 9000, latin("éèêàçôîû"), " "},
	"pt": {strings.Fields("clipe oficial futebol melhores momentos gols episódio novo notícias reação canção"), 9000, latin("ãõçáéêó"), " "},
	"hi": {strings.Fields("गाना आधिकारिक वीडियो क्रिकेट मैच ख़बरें नया एपिसोड बड़ा धमाका"), 9000, indic(0x0915, 0x0939, "ािीुूेैोौं", "\u095c\u095d"), " "},
	"bn": {strings.Fields("গান খেলা খবর নতুন নাটক"), 4000, indic(0x0995, 0x09b9, "ািীুূেৈোৌং", "\u09dc\u09dd"), " "},
	"ta": {strings.Fields("தமிழ் பாடல் காதல் புதிய செய்தி"), 4000, indic(0x0b95, 0x0bb9, "ாிீுூெேைொோ", ""), " "},
	"ko": {strings.Fields("먹방 서울 뮤직비디오 노래 사랑"), 6000, hangul, " "},
	"ja": {strings.Fields("公式 東京 ライブ 新曲 配信 ゲーム"), 6000, japanese, ""},
	"zh": {strings.Fields("美食 台北 開箱 新聞 遊戲"), 5000, han, ""},
	"ar": {strings.Fields("مباراة الحلقة أخبار اليوم ملخص"), 5000, arabic, " "},
	"th": {strings.Fields("ข่าว รีวิว วันนี้ ประเทศไทย"), 3000, thai, ""},
}

// newLexicon makes code's lexicon; the same seed gives the same words.
func newLexicon(code string, s langSpec, seed uint64) *lexicon {
	r := rand.New(rand.NewPCG(seed, uint64(len(code))<<32|uint64(code[0])<<8|uint64(code[1])))
	seen := map[string]bool{}
	words := make([]string, 0, len(s.common)+s.size)
	for _, w := range s.common {
		seen[w], words = true, append(words, w)
	}
	for tries := 0; len(words) < len(s.common)+s.size && tries < 20*s.size; tries++ {
		if w := s.make(r); !seen[w] {
			seen[w], words = true, append(words, w)
		}
	}
	l := &lexicon{words: words, cum: make([]float64, len(words)), sep: s.sep}
	sum := 0.0
	for i := range words {
		sum += 1 / math.Pow(float64(i+2), 1.05)
		l.cum[i] = sum
	}
	return l
}

// latin makes words of Latin syllables, some with the language's accented
// letters (accents) and some capitalized, as names are.
func latin(accents string) script {
	const cons, vows = "bcdfghjklmnprstvwz", "aeiou"
	acc := []rune(accents)
	return func(r *rand.Rand) string {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteByte(cons[r.IntN(len(cons))])
			if len(acc) > 0 && r.IntN(5) == 0 {
				b.WriteRune(acc[r.IntN(len(acc))])
			} else {
				b.WriteByte(vows[r.IntN(len(vows))])
			}
			if r.IntN(3) == 0 {
				b.WriteByte(cons[r.IntN(len(cons))])
			}
		}
		w := b.String()
		if r.IntN(6) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		return w
	}
}

// indic makes words of an Indic script: consonants from lo to hi with
// vowel signs, and now and then a nukta letter as the API sends it (one
// code point, which NFC would not compose).
func indic(lo, hi rune, signs, nukta string) script {
	sg, nk := []rune(signs), []rune(nukta)
	return func(r *rand.Rand) string {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			if len(nk) > 0 && r.IntN(12) == 0 {
				b.WriteRune(nk[r.IntN(len(nk))])
			} else {
				b.WriteRune(lo + rune(r.IntN(int(hi-lo+1))))
			}
			if r.IntN(3) > 0 {
				b.WriteRune(sg[r.IntN(len(sg))])
			}
		}
		return b.String()
	}
}

// hangul makes words of two or three precomposed Hangul syllables.
func hangul(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(2) {
		t := 0
		if r.IntN(2) == 0 {
			t = r.IntN(28)
		}
		b.WriteRune(0xac00 + rune((r.IntN(19)*21+r.IntN(21))*28+t))
	}
	return b.String()
}

// japanese makes a word of two kanji, or of three to five katakana (some
// half-width, as real titles carry them), or of hiragana.
func japanese(r *rand.Rand) string {
	var b strings.Builder
	switch r.IntN(4) {
	case 0:
		for range 3 + r.IntN(3) {
			b.WriteRune(0x30a2 + rune(r.IntN(0x30f3-0x30a2)))
		}
	case 1:
		for range 3 + r.IntN(3) {
			b.WriteRune(0xff71 + rune(r.IntN(0xff9d-0xff71)))
		}
	case 2:
		for range 2 + r.IntN(3) {
			b.WriteRune(0x3042 + rune(r.IntN(0x3093-0x3042)))
		}
	default:
		return han(r)
	}
	return b.String()
}

// han makes a word of two (now and then three) common CJK ideographs.
func han(r *rand.Rand) string {
	var b strings.Builder
	for range 2 + r.IntN(4)/3 {
		b.WriteRune(0x4e00 + rune(r.IntN(0x6fff-0x4e00)))
	}
	return b.String()
}

// arabic makes a word of three to six Arabic letters, some with the
// definite article.
func arabic(r *rand.Rand) string {
	var b strings.Builder
	if r.IntN(3) == 0 {
		b.WriteString("ال")
	}
	for range 3 + r.IntN(4) {
		b.WriteRune(0x0628 + rune(r.IntN(0x064a-0x0628)))
	}
	return b.String()
}

// thai makes a word of Thai consonants and vowels.
func thai(r *rand.Rand) string {
	const vowels = "ะาิีึืุูเแโ"
	v := []rune(vowels)
	var b strings.Builder
	for range 2 + r.IntN(3) {
		b.WriteRune(0x0e01 + rune(r.IntN(0x0e2e-0x0e01)))
		if r.IntN(2) == 0 {
			b.WriteRune(v[r.IntN(len(v))])
		}
	}
	return b.String()
}
