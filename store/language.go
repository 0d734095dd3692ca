package store

import (
	"fmt"
	"regexp"
	"strings"
)

// ErrBadLanguage: a --language or ?language= value is not a BCP-47 tag.
var ErrBadLanguage = fmt.Errorf("not a language tag")

// languageTag is a BCP-47 tag as far as a filter needs it: a primary
// subtag of letters and any further subtags. It leaves out LIKE's
// wildcards, so the tag goes into a pattern as it is.
var languageTag = regexp.MustCompile(`^[a-z]{2,8}(-[a-z0-9]{1,8})*$`)

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
