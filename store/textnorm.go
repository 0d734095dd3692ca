// The search index's one normalization (indexWords, wordTokens), applied to
// indexed text and to queries alike, so that what a user types meets what the
// upstream sent: Unicode NFKC, full case folding (ß = ss), diacritics folded
// on Latin, Greek, Cyrillic, Arabic and Hebrew letters, and words split at
// anything that is not a letter, a digit or a mark (emoji, symbols,
// variation selectors and joiners included).
//
// Chinese, Japanese, Thai (and Korean, whose words carry particles glued to
// them) are written without spaces between words, so a run of those
// scripts becomes its overlapping character bigrams: 焼鳥屋 is 焼鳥 鳥屋,
// and a query of two or more characters is the phrase of its own bigrams,
// which finds it anywhere inside a longer run.
//
// It works in Go, not in SQLite's tokenizer, because FTS5's unicode61 tables
// are older than the text charts carry (they take U+1F900 emoji for
// letters), it does not fold ß, does not segment these scripts, and does
// not normalize Devanagari nukta letters (U+095C vs U+0921 U+093C). Every
// token keeps the byte offsets of the original text it came from, so a
// snippet can mark the text exactly as it was sent.

package store

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// wordToken is one searchable word of a text.
type wordToken struct {
	// Text is the normalized word, as the index holds it.
	Text string
	// Start and End are the byte offsets of the original text it came from.
	Start, End int
	// Run is set for a token of a Chinese, Japanese, Thai or Korean run:
	// a bigram, or a run of a single character.
	Run bool
	// Bigram is set for the two-character tokens of a run; a single
	// character (Run without Bigram) can only be found as a prefix of them.
	Bigram bool
}

// Tokens splits s into its normalized words, in order.
func wordTokens(s string) []wordToken {
	var t tokenizer
	t.scan(s)
	return t.out
}

// Index returns the normalized words of s separated by single spaces: the
// text the FTS5 index is fed (its ascii tokenizer splits at the spaces and
// nowhere else, since the words hold no other ASCII punctuation). It is
// Tokens without the offsets, written straight into one string.
func indexWords(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	t := tokenizer{index: &b}
	t.scan(s)
	return b.String()
}

func (t *tokenizer) scan(s string) {
	for i := 0; i < len(s); {
		j := clusterEnd(s, i)
		t.feed(fold(s[i:j]), i, j)
		i = j
	}
	t.flush()
}

// clusterEnd returns where the cluster starting at i ends: a character with
// the combining marks and Hangul vowel or final jamo that follow it.
// Clusters are normalized one at a time, which keeps every output rune tied
// to the original bytes it came from.
func clusterEnd(s string, i int) int {
	_, n := utf8.DecodeRuneInString(s[i:])
	j := i + n
	for j < len(s) {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !continues(r) {
			break
		}
		j += n
	}
	return j
}

func continues(r rune) bool {
	if r < 0x300 {
		return false
	}
	return (unicode.IsMark(r) && !isSelector(r)) || (r >= 0x1160 && r <= 0x11FF)
}

// isSelector reports the variation selectors, which are marks to Unicode
// but only pick a glyph (❤ vs ❤️): they separate words.
func isSelector(r rune) bool {
	return (r >= 0xFE00 && r <= 0xFE0F) || (r >= 0xE0100 && r <= 0xE01EF) || (r >= 0x180B && r <= 0x180F)
}

// ignorable are dropped without splitting a word: a soft hyphen, a word
// joiner, a byte order mark, the Arabic tatweel that only stretches a line.
func ignorable(r rune) bool {
	return r == 0xAD || r == 0x2060 || r == 0xFEFF || r == 0x640
}

// foldCache keeps what each non-ASCII cluster folds to: real text reuses a
// few thousand of them, and folding one costs a few allocations.
var foldCache sync.Map

const foldCacheMax = 1 << 16

var foldCacheLen struct {
	sync.Mutex
	n int
}

// fold normalizes one cluster.
func fold(c string) string {
	if len(c) == 1 {
		b := c[0]
		if 'A' <= b && b <= 'Z' {
			return lowerASCII[b-'A' : b-'A'+1]
		}
		return c
	}
	if v, ok := foldCache.Load(c); ok {
		return v.(string)
	}
	f := foldSlow(c)
	foldCacheLen.Lock()
	if foldCacheLen.n < foldCacheMax {
		foldCacheLen.n++
		foldCache.Store(strings.Clone(c), f)
	}
	foldCacheLen.Unlock()
	return f
}

const lowerASCII = "abcdefghijklmnopqrstuvwxyz"

// foldSlow is NFKC, full case folding, NFKC again (folding can leave text
// unnormalized), then the diacritics of the scripts that write them as
// optional accents; marks of other scripts (Devanagari vowel signs and
// nukta, Thai tone marks) are part of the letter and stay.
func foldSlow(c string) string {
	s := norm.NFKC.String(c)
	s = cases.Fold().String(s)
	s = norm.NFKC.String(s)
	d := norm.NFD.String(s)
	var b strings.Builder
	accents := false
	for _, r := range d {
		switch {
		case ignorable(r):
			continue
		case unicode.Is(unicode.Mn, r) && !isSelector(r) && accents:
			continue
		case !unicode.IsMark(r):
			accents = unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic, unicode.Arabic, unicode.Hebrew)
		}
		if x, ok := stroked[r]; ok {
			b.WriteRune(x)
			continue
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// stroked are Latin letters whose diacritic is part of the glyph, so that
// no decomposition removes it.
var stroked = map[rune]rune{'ø': 'o', 'đ': 'd', 'ł': 'l', 'ħ': 'h', 'ŧ': 't', 'ı': 'i', 'ð': 'd'}

type class int

const (
	classSep class = iota
	classLetter
	classMark
	classRun
)

func classOf(r rune) class {
	switch {
	case r < 0x80:
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return classLetter
		}
		return classSep
	case isSelector(r):
		return classSep
	case unicode.IsMark(r):
		return classMark
	case inRunScript(r):
		return classRun
	case unicode.IsLetter(r) || unicode.IsNumber(r):
		return classLetter
	}
	return classSep
}

// inRunScript reports the scripts written without spaces between words
// (and Hangul, whose particles are glued to the word).
func inRunScript(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai,
		unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Hangul) ||
		r == 'ー' || r == '々' || r == '〆'
}

// unit is one character of a run, with its marks.
type unit struct {
	text       string
	start, end int
}

type tokenizer struct {
	out []wordToken
	// index, when set, receives the words instead of out
	index *strings.Builder
	// the word being read
	word       []byte
	start, end int
	// the run being read
	run []unit
}

// emit adds one token.
func (t *tokenizer) emit(tok wordToken) {
	if t.index == nil {
		t.out = append(t.out, tok)
		return
	}
	t.space()
	t.index.WriteString(tok.Text)
}

func (t *tokenizer) space() {
	if t.index.Len() > 0 {
		t.index.WriteByte(' ')
	}
}

// feed takes one cluster's normalized text and the original bytes it spans.
func (t *tokenizer) feed(f string, start, end int) {
	for _, r := range f {
		switch classOf(r) {
		case classSep:
			t.flush()
		case classLetter:
			t.flushRun()
			if len(t.word) == 0 {
				t.start = start
			}
			t.word = utf8.AppendRune(t.word, r)
			t.end = end
		case classMark:
			switch {
			case len(t.word) > 0:
				t.word = utf8.AppendRune(t.word, r)
				t.end = end
			case len(t.run) > 0:
				u := &t.run[len(t.run)-1]
				u.text += string(r)
				u.end = end
			}
		case classRun:
			t.flushWord()
			// a cluster that folds to several characters (㍻ is 平成)
			// gives each of them its bytes
			t.run = append(t.run, unit{string(r), start, end})
		}
	}
}

func (t *tokenizer) flush() {
	t.flushWord()
	t.flushRun()
}

func (t *tokenizer) flushWord() {
	if len(t.word) == 0 {
		return
	}
	if t.index != nil {
		t.space()
		t.index.Write(t.word)
	} else {
		t.emit(wordToken{Text: string(t.word), Start: t.start, End: t.end})
	}
	t.word = t.word[:0]
}

// flushRun emits a run as its overlapping bigrams, or a single character.
func (t *tokenizer) flushRun() {
	switch n := len(t.run); {
	case n == 1:
		u := t.run[0]
		t.emit(wordToken{Text: u.text, Start: u.start, End: u.end, Run: true})
	case n > 1:
		for k := 0; k+1 < n; k++ {
			a, b := t.run[k], t.run[k+1]
			if t.index != nil {
				t.space()
				t.index.WriteString(a.text)
				t.index.WriteString(b.text)
				continue
			}
			t.emit(wordToken{Text: a.text + b.text, Start: a.start, End: b.end, Run: true, Bigram: true})
		}
	}
	t.run = t.run[:0]
}
