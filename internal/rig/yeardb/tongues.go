package yeardb

import (
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// The languages of the regions beyond the defaults: each speaks as the
// fake upstream's chart of it does (fakeyt.Spoken), English mixed in, and a
// language without a lexicon of its own here gets one made from the fake's
// words in it, so that every catalogued region's text is in its script.

// weighted is one language of a region's charts and its weight in percent.
type weighted struct {
	code string
	pct  int
}

// langsOf are region's languages: regionLangs for the default regions,
// else the fake's, the first the most spoken and a fifth in English as
// the fake mixes it in.
func langsOf(region string) []weighted {
	if ls, ok := regionLangs[region]; ok {
		return ls
	}
	spoken := fakeyt.Spoken(region)
	if len(spoken) == 0 {
		return []weighted{{"en", 100}}
	}
	// 80 points of the region's own languages: the first gets twice the
	// share of each other one.
	share := 80 / (len(spoken) + 1)
	out := []weighted{{spoken[0], 80 - share*(len(spoken)-1)}}
	for _, code := range spoken[1:] {
		out = append(out, weighted{code, share})
	}
	return append(out, weighted{"en", 20})
}

// unspaced are languages whose titles run without spaces between words.
var unspaced = map[string]bool{"lo": true, "km": true, "zh-Hans": true, "zh-Hant": true, "my": true}

// sampled is a langSpec made from the fake's words in code: those words
// head its Zipf curve, and made-up words are pieces of them glued
// together, so they are in the language's script with its marks.
func sampled(code string) langSpec {
	words := fakeyt.Words(code)
	sep := " "
	if unspaced[code] {
		sep = ""
	}
	return langSpec{common: words, size: 4000, make: pieces(words), sep: sep}
}

// pieces makes words of two to four pieces of the sample's words, each
// two or three letters starting on a letter that is not a combining mark,
// so that no made-up word begins with a vowel sign.
func pieces(sample []string) script {
	var runs [][]rune
	for _, w := range sample {
		if rs := letters(w); len(rs) >= 2 {
			runs = append(runs, rs)
		}
	}
	if len(runs) == 0 {
		return latin("")
	}
	return func(r *rand.Rand) string {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			rs := runs[r.IntN(len(runs))]
			at := r.IntN(len(rs) - 1)
			for at > 0 && unicode.Is(unicode.M, rs[at]) {
				at--
			}
			b.WriteString(string(rs[at:min(len(rs), at+2+r.IntN(2))]))
		}
		return b.String()
	}
}

// letters are w's letters and marks, without digits, punctuation or emoji.
func letters(w string) []rune {
	var out []rune
	for _, c := range w {
		if unicode.IsLetter(c) || unicode.Is(unicode.M, c) {
			out = append(out, c)
		}
	}
	return out
}
