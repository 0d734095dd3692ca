package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// checkSearches: every search a reader made while the process ran was
// answered, and answered with what docs/api.md promises of its filters:
// with a region, only videos charted in it (each hit's regions hold it);
// with a language, only videos in it (either tag that language or a
// narrower form of it); every hit with a word of the query marked in its
// snippet, the query's word itself where both are plain letters. A video the reader had just been served in a
// chart, searched by its whole title, is among the hits (the API's pages
// read as deep as they go). Readers served charts that never met a
// filtered search with hits, or a video they knew found, checked nothing.
func checkSearches(h *History) []string {
	if !h.Readers || h.NoSearches {
		return nil
	}
	var wrong []string
	filtered, found := 0, 0
	for _, s := range h.Searched {
		if s.Down {
			continue
		}
		at := s.At.UTC().Format(time.RFC3339)
		if s.Err != "" {
			wrong = append(wrong, fmt.Sprintf("at %s, the process up, %s: %s", at, s.Query, s.Err))
			continue
		}
		what := fmt.Sprintf("at %s %s (region %q, language %q)", at, s.Query, s.Region, s.Language)
		for _, hit := range s.Hits {
			if s.Region != "" && !slices.Contains(hit.Regions, s.Region) {
				wrong = append(wrong, fmt.Sprintf("%s found %s, charted in %v only", what, hit.ID, hit.Regions))
				break
			}
			if !marksQuery(hit.Snippet, s.Query) {
				wrong = append(wrong, fmt.Sprintf("%s found %s, its snippet %q marking no word of the query", what, hit.ID, hit.Snippet))
				break
			}
			if s.Language != "" && !inLanguage(hit, s.Language) {
				wrong = append(wrong, fmt.Sprintf("%s found %s, in audio %q and text %q", what, hit.ID, hit.AudioLanguage, hit.Language))
				break
			}
		}
		if s.Region != "" && s.Language != "" && len(s.Hits) > 0 {
			filtered++
		}
		if s.Want == "" {
			continue
		}
		switch {
		case slices.ContainsFunc(s.Hits, func(e Shown) bool { return e.ID == s.Want }):
			found++
		case !s.More:
			wrong = append(wrong, fmt.Sprintf("%s did not find %s, served in the chart that instant, among its %d hits", what, s.Want, len(s.Hits)))
		}
	}
	var out []string
	if len(wrong) > 0 {
		out = append(out, fmt.Sprintf("readers' searches: %d answers failed or broke their query: %s", len(wrong), firstFew(wrong)))
	}
	// a chart served with its entries is what a reader searches after
	read := slices.ContainsFunc(h.Served, func(s Served) bool { return !s.Down && s.Err == "" && len(s.Entries) > 0 })
	if read && (filtered == 0 || found == 0) {
		out = append(out, fmt.Sprintf("readers searched %d times, %d with a region and a language that had hits, %d finding a video they knew: the search was not checked",
			len(h.Searched), filtered, found))
	}
	return out
}

// marksQuery says whether a hit's snippet marks what its query asked: a
// word at least, and a query of one plain word itself, in any case, where
// every word marked is plain too (a word spelled otherwise meets the query
// through the index's folding, which this does not redo).
func marksQuery(snippet, query string) bool {
	marks := marked(snippet)
	if len(marks) == 0 {
		return false
	}
	if !plainWord(query) {
		return true
	}
	for _, m := range marks {
		if !plainWord(m) || strings.EqualFold(m, query) {
			return true
		}
	}
	return false
}

// marked is the texts between [ and ] in a snippet, in order.
func marked(snippet string) []string {
	var out []string
	for {
		_, after, ok := strings.Cut(snippet, "[")
		if !ok {
			return out
		}
		m, rest, ok := strings.Cut(after, "]")
		if !ok {
			return out
		}
		out, snippet = append(out, m), rest
	}
}

// plainWord says whether s is a word of ASCII letters alone.
func plainWord(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') })
}
