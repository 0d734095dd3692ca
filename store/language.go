package store

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ErrBadLanguage: a --language or ?language= value is not a BCP-47 tag.
var ErrBadLanguage = fmt.Errorf("not a language tag")

// languageTag is a BCP-47 tag as far as a filter needs it: a primary
// subtag of two or three letters (an ISO 639 code: the longer ones BCP 47
// reserves are in no use, and a word such as "klingon" is a mistake, not a
// language; Klingon is tlh) and any further subtags. It leaves out LIKE's
// wildcards, so the tag goes into a pattern as it is.
var languageTag = regexp.MustCompile(`^[a-z]{2,3}(-[a-z0-9]{1,8})*$`)

// Language checks a language filter and writes it as the store compares
// it: lower case, "" for none. A filter keeps a video when either of its
// tags (AudioLanguage, Language) is the filter or a narrower form of it:
// "hi" keeps hi and hi-IN, "en-US" keeps en-US but not en; "zxx" keeps the
// videos without linguistic content. A video with neither tag is in no
// language.
func Language(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" || languageTag.MatchString(s) {
		return s, nil
	}
	return "", fmt.Errorf("language %q: %w (hi, en-US, zxx)", s, ErrBadLanguage)
}

// languageMatch keeps the videos (AS v) in the language ?4, or a narrower
// form of it (?5: the tag and "-%"), on either database.
const languageMatch = `(lower(v.audio_language) = ?4 OR lower(v.audio_language) LIKE ?5
  OR lower(v.language) = ?4 OR lower(v.language) LIKE ?5)`

// languageArgs are languageMatch's ?4 and ?5.
func languageArgs(lang string) []any { return []any{lang, lang + "-%"} }

// ChartLanguage is one language of a chart's run: a primary subtag (hi
// for hi and hi-IN) and how many of the run's videos are in it.
type ChartLanguage struct {
	Language string
	Videos   int
}

// runLanguagesSQL counts run ?1's entries in region ?2 by the tag each
// video is filed under: its audio language, else its text language, a tag
// that says no language (zxx, und) being none. The primary subtag is cut
// in Go, where one text serves both databases.
const runLanguagesSQL = `
SELECT CASE WHEN lower(v.audio_language) NOT IN ('', 'zxx', 'und') THEN lower(v.audio_language)
  ELSE lower(v.language) END AS tag, count(*)
FROM trending_entries AS e JOIN videos AS v ON v.vid = e.vid
WHERE e.run_id = ?1 AND e.region = ?2
GROUP BY tag`

// ChartLanguages lists the languages of a chart's run (Chart.RunID in
// Chart.Region), most videos first, each under its primary subtag: what
// the chart's language tabs offer. A video in no language, or in a tag
// that is not one, is in none of them.
func (db *DB) ChartLanguages(ctx context.Context, region string, runID int64) ([]ChartLanguage, error) {
	rows, err := db.r.QueryContext(ctx, runLanguagesSQL, runID, region)
	if err != nil {
		return nil, fmt.Errorf("languages of run %d: %w", runID, err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var tag string
		var n int
		if err := rows.Scan(&tag, &n); err != nil {
			return nil, fmt.Errorf("languages of run %d: %w", runID, err)
		}
		primary, _, _ := strings.Cut(tag, "-")
		if languageTag.MatchString(primary) && primary != "zxx" && primary != "und" {
			counts[primary] += n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("languages of run %d: %w", runID, err)
	}
	out := make([]ChartLanguage, 0, len(counts))
	for l, n := range counts {
		out = append(out, ChartLanguage{Language: l, Videos: n})
	}
	slices.SortFunc(out, func(a, b ChartLanguage) int {
		return cmp.Or(cmp.Compare(b.Videos, a.Videos), strings.Compare(a.Language, b.Language))
	})
	return out, nil
}
