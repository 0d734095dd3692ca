package store

import (
	"strings"
)

// snippetWords is how many words a snippet shows at most, as FTS5's
// snippet() was asked for before.
const snippetWords = 16

// snippet returns the best matching part of a video's text, the original
// text as sent, with the words the query matched between [ and ]. The
// index holds normalized words only, so the marks are found here: the text
// is split with the index's own normalization, whose tokens keep their
// offsets into the original. The field with the most distinct matched
// words wins, title first on a tie.
func snippet(fields []string, marks []mark) string {
	best, bestScore := 0, -1
	var bestToks []wordToken
	var bestHit []bool
	for i, f := range fields {
		toks := wordTokens(f)
		hit, score := matchTokens(toks, marks)
		if score > bestScore {
			best, bestScore, bestToks, bestHit = i, score, toks, hit
		}
		if score == len(marks) { // no other field can do better
			break
		}
	}
	return render(fields[best], bestToks, bestHit)
}

// matchTokens marks the tokens the query matched and counts the distinct
// marks that matched.
func matchTokens(toks []wordToken, marks []mark) ([]bool, int) {
	hit := make([]bool, len(toks))
	seen := make([]bool, len(marks))
	score := 0
	for i, t := range toks {
		for k, m := range marks {
			if m.matches(t.Text) {
				hit[i] = true
				if !seen[k] {
					seen[k], score = true, score+1
				}
			}
		}
	}
	return hit, score
}

// render cuts the window of at most snippetWords tokens with the most hits
// and marks the hits, merging the overlapping spans of bigrams.
func render(text string, toks []wordToken, hit []bool) string {
	if len(toks) == 0 {
		return text
	}
	from := window(hit)
	to := min(from+snippetWords, len(toks))
	var b strings.Builder
	start, end := toks[from].Start, toks[to-1].End
	if from == 0 {
		start = 0
	} else {
		b.WriteString("…")
	}
	if to == len(toks) {
		end = len(text)
	}
	at := start
	for i := from; i < to; i++ {
		if !hit[i] {
			continue
		}
		s, e := toks[i].Start, toks[i].End
		for i+1 < to && hit[i+1] && toks[i+1].Start < e { // overlapping bigrams
			i++
			e = max(e, toks[i].End)
		}
		s = max(s, at)
		b.WriteString(text[at:s])
		b.WriteString("[" + text[s:e] + "]")
		at = e
	}
	b.WriteString(text[at:end])
	if end < len(text) {
		b.WriteString("…")
	}
	return b.String()
}

// window returns the first token of the snippetWords-long window with the
// most hits, started three words before its first hit for context.
func window(hit []bool) int {
	last, bestN, n := 0, -1, 0
	for i := range hit {
		if hit[i] {
			n++
		}
		if i >= snippetWords && hit[i-snippetWords] {
			n--
		}
		if n > bestN {
			last, bestN = i, n
		}
	}
	from := max(0, last-snippetWords+1)
	for k := from; k <= last; k++ {
		if hit[k] {
			return max(from, k-3)
		}
	}
	return from
}
