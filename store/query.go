package store

import (
	"fmt"
	"strings"
	"unicode"
)

// matchExpr turns what a user typed into an FTS5 MATCH expression that
// cannot be a syntax error. Every word becomes a quoted string (FTS5 splits
// it with the index's own tokenizer, so AC/DC is the phrase "ac dc"); a
// trailing * keeps its meaning as a prefix; balanced "double quotes" make a
// phrase; OR and NOT written in capitals between two terms are operators,
// AND is what terms already mean, and any other operator or punctuation is
// dropped. It returns an error wrapping ErrBadQuery when nothing searchable
// is left.
func matchExpr(q string) (string, error) {
	var out []string
	pendingOp := ""
	for _, t := range lexQuery(q) {
		if !t.quoted && !t.prefix {
			switch t.text {
			case "OR", "NOT":
				if len(out) == 0 && t.text == "NOT" {
					return "", fmt.Errorf("%w: NOT needs a term before it (cats NOT dogs); to search for the word, write it in lower case", ErrBadQuery)
				}
				if len(out) > 0 {
					pendingOp = t.text
				}
				continue
			case "AND", "NEAR":
				continue
			}
		}
		if !searchable(t.text) {
			continue
		}
		s := `"` + strings.ReplaceAll(t.text, `"`, `""`) + `"`
		if t.prefix {
			s += "*"
		}
		if pendingOp != "" {
			out = append(out, pendingOp)
			pendingOp = ""
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return "", fmt.Errorf("%w: %q has no letters or digits to search for", ErrBadQuery, q)
	}
	return strings.Join(out, " "), nil
}

type queryTerm struct {
	text           string
	quoted, prefix bool
}

// lexQuery splits q into words and "phrases". An unbalanced quote is
// ignored.
func lexQuery(q string) []queryTerm {
	if strings.Count(q, `"`)%2 == 1 {
		i := strings.LastIndex(q, `"`)
		q = q[:i] + " " + q[i+1:]
	}
	var terms []queryTerm
	for q != "" {
		q = strings.TrimLeftFunc(q, unicode.IsSpace)
		if q == "" {
			break
		}
		var t queryTerm
		if q[0] == '"' {
			end := strings.IndexByte(q[1:], '"') + 1
			t = queryTerm{text: q[1:end], quoted: true}
			q = q[end+1:]
		} else {
			end := strings.IndexFunc(q, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
			if end < 0 {
				end = len(q)
			}
			t, q = queryTerm{text: q[:end]}, q[end:]
		}
		if strings.HasPrefix(q, "*") {
			t.prefix = true
			q = strings.TrimLeft(q, "*")
		}
		if !t.quoted && strings.HasSuffix(t.text, "*") {
			t.text, t.prefix = strings.TrimRight(t.text, "*"), true
		}
		terms = append(terms, t)
	}
	return terms
}

// searchable reports whether the index's tokenizer (unicode61 with
// categories 'L* N* Co Mc Mn') would find a token in s. A quoted string
// without one is an empty phrase, which matches nothing.
func searchable(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool {
		return unicode.IsLetter(r) || unicode.IsNumber(r) ||
			unicode.Is(unicode.Co, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Mn, r)
	}) >= 0
}
