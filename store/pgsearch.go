package store

import (
	"strconv"
	"strings"

	"github.com/ingestworks/ingest"
)

// PostgreSQL's search holds the same words as SQLite's index: Go writes
// each video's words (indexWords, as ingest_words feeds FTS5) as a
// tsvector literal, and each query's phrases as a tsquery literal, so no
// parser of the server's (whose word boundaries follow its locale) comes
// between them. A phrase is its words at consecutive positions (<->), a
// prefix is :*, and the fields are weights: title A, tags and channel B,
// description C, so that ts_rank's default weights (1.0, 0.4, 0.2) give
// them bm25's proportions (10, 4, 2). ts_rank is not BM25: it counts how
// often and where the words occur, weighted, but not how rare a word is
// across the videos, nor (as used here) how long the text is.

// fieldGap keeps a phrase from matching across two fields.
const fieldGap = 64

// maxPos is the largest position a tsvector holds.
const maxPos = 16383

// tsDoc is the tsvector literal of a video's text.
func tsDoc(title, description, tags, channel string) string {
	var b strings.Builder
	pos := 1
	for _, f := range []struct {
		text, weight string
	}{{title, "A"}, {description, "C"}, {tags, "B"}, {channel, "B"}} {
		for _, w := range strings.Fields(indexWords(f.text)) {
			if len(w) < 2047 {
				b.WriteString(tsLexeme(w) + ":" + strconv.Itoa(min(pos, maxPos)) + f.weight + " ")
			}
			pos++
		}
		pos += fieldGap
	}
	return b.String()
}

// pgText is text as PostgreSQL's text can hold it: without NUL
// characters (the only change to the text as sent, and one the upstream
// never needs).
func pgText(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// SearchDoc is v's words as PostgreSQL's search index (video_docs.doc)
// holds them, a tsvector literal: what a page's statement writes, and
// what a copy into PostgreSQL writes for the videos it carries.
func SearchDoc(v *ingest.Video) string {
	return tsDoc(pgText(v.Title), pgText(v.Description), pgText(strings.Join(v.Tags, " ")), pgText(v.ChannelTitle))
}

// tsLexeme quotes a word for a tsvector or tsquery literal.
func tsLexeme(w string) string {
	w = strings.ReplaceAll(w, `\`, `\\`)
	return "'" + strings.ReplaceAll(w, "'", "''") + "'"
}

// tsQuery is the query as a tsquery: the phrases FTS5 is given, with the
// same operators (NOT binds tightest, then AND, then OR, in both).
func (pq parsedQuery) tsQuery() string {
	var b strings.Builder
	for i, t := range pq.terms {
		switch {
		case i == 0:
		case t.op == "OR":
			b.WriteString(" | ")
		case t.op == "NOT":
			b.WriteString(" & !")
		default:
			b.WriteString(" & ")
		}
		b.WriteString("(" + tsPhrase(t) + ")")
	}
	return b.String()
}

func tsPhrase(t term) string {
	parts := make([]string, len(t.words))
	for i, w := range t.words {
		parts[i] = tsLexeme(w)
		if i == len(t.words)-1 && t.prefix {
			parts[i] += ":*"
		}
	}
	return strings.Join(parts, " <-> ")
}
