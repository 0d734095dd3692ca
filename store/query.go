package store

import (
	"fmt"
	"strings"
	"unicode"
)

// parsedQuery is a query ready for the index, with the words a snippet
// marks.
type parsedQuery struct {
	expr  string
	marks []mark
	terms []term // what expr says, for PostgreSQL's tsquery (tsQuery)
}

// term is one phrase of a query and the operator before it ("", OR, NOT).
type term struct {
	op     string
	words  []string
	prefix bool
}

// mark is a normalized word to mark in a snippet; prefix marks every word
// that starts with it.
type mark struct {
	text   string
	prefix bool
}

// matches reports whether a normalized word of the text is this mark.
func (m mark) matches(word string) bool {
	return word == m.text || (m.prefix && strings.HasPrefix(word, m.text))
}

// parseQuery normalizes every word or "phrase" the user typed with the
// index's own normalization (indexWords) and writes it as a quoted FTS5
// phrase of the resulting words, so that punctuation can never be syntax
// (AC/DC is the phrase "ac dc", 焼鳥屋 the phrase of its bigrams "焼鳥 鳥屋").
// A trailing * keeps its meaning as a prefix; so does a term that ends in a
// single Chinese, Japanese, Thai or Korean character, since the index holds
// those runs as bigrams. OR and NOT written in capitals between two terms
// are operators, AND is what terms already mean, and any other operator or
// punctuation is dropped. It returns an error wrapping ErrBadQuery when
// nothing searchable is left.
func parseQuery(q string) (parsedQuery, error) {
	var pq parsedQuery
	var out, ops []string
	pendingOp := ""
	for _, t := range lexQuery(q) {
		if !t.quoted && !t.prefix {
			switch t.text {
			case "OR", "NOT", "AND", "NEAR":
				ops = append(ops, t.text)
			}
			switch t.text {
			case "OR", "NOT":
				if len(out) == 0 && t.text == "NOT" {
					return pq, fmt.Errorf("%w: NOT needs a term before it (cats NOT dogs); to search for the word, write it in lower case", ErrBadQuery)
				}
				if len(out) > 0 {
					pendingOp = t.text
				}
				continue
			case "AND", "NEAR":
				continue
			}
		}
		phrase, marks := phraseOf(t)
		if phrase == "" {
			continue
		}
		pq.terms = append(pq.terms, termOf(pendingOp, marks))
		if pendingOp != "" {
			out = append(out, pendingOp)
		}
		if pendingOp != "NOT" {
			pq.marks = append(pq.marks, marks...)
		}
		pendingOp = ""
		out = append(out, phrase)
	}
	if len(out) == 0 && len(ops) > 0 {
		return pq, fmt.Errorf("%w: %q holds only operators (AND, OR, NOT and NEAR in capitals join terms); to search for the word, write it in lower case (%s)",
			ErrBadQuery, q, strings.ToLower(strings.Join(ops, " ")))
	}
	if len(out) == 0 {
		return pq, fmt.Errorf("%w: %q has no letters or digits to search for", ErrBadQuery, q)
	}
	pq.expr = strings.Join(out, " ")
	return pq, nil
}

// phraseOf writes one term as an FTS5 phrase of its normalized words; ""
// when it has none.
func phraseOf(t queryTerm) (string, []mark) {
	toks := wordTokens(t.text)
	if len(toks) == 0 {
		return "", nil
	}
	words := make([]string, len(toks))
	marks := make([]mark, len(toks))
	for i, tok := range toks {
		words[i] = tok.Text
		marks[i] = mark{text: tok.Text}
	}
	last := toks[len(toks)-1]
	prefix := t.prefix || (last.Run && !last.Bigram)
	marks[len(marks)-1].prefix = prefix
	// The words hold no ASCII punctuation, so no quote to double.
	s := `"` + strings.Join(words, " ") + `"`
	if prefix {
		s += "*"
	}
	return s, marks
}

// termOf is a phrase's words as its marks hold them.
func termOf(op string, marks []mark) term {
	t := term{op: op, prefix: marks[len(marks)-1].prefix}
	for _, m := range marks {
		t.words = append(t.words, m.text)
	}
	return t
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
