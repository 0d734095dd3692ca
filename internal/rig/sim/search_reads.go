package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode"
)

// Searched is one reader's search on the site's API: when, what it asked
// (its words, region and language, "" for none), the video it knew to
// match ("" for none) and the hits the answer's pages gave. More says the
// answer had pages past those the reader read; Err, why it failed; Down,
// that the process was down at its start or end.
type Searched struct {
	At               time.Time
	Query            string
	Region, Language string
	Want             string
	Hits             []Shown
	More             bool
	Err              string
	Down             bool
}

// searchPages is how many pages of a search a reader reads looking for
// the video it knows: the API's own depth (docs/api.md: 500 hits).
const searchPages = 10

// searches are a reader's two searches after reading a chart it was
// served (s): one for a video of that chart by its whole title, which the
// answer must hold, alternately with no filter and with the chart's
// region and the video's language; and one for a word of another of its
// titles in the region and a language of a third, every hit of which
// must be of both. The videos are picked by the visit's number i, so the
// searches draw nothing from the seed and leave the readers' times as
// they were.
func searches(ctx context.Context, client *http.Client, i int, s Served, up func() bool) []Searched {
	if s.Err != "" || len(s.Entries) == 0 {
		return nil
	}
	n := len(s.Entries)
	var out []Searched
	known := s.Entries[(i*7)%n]
	if i%2 == 0 {
		// a video with both tags is one a stray language filter hides
		for k := range n {
			if e := s.Entries[(i*7+k)%n]; e.AudioLanguage != "" && e.Language != "" {
				known = e
				break
			}
		}
	}
	if q := phrase(known.Title); q != "" {
		ask := Searched{Query: q, Want: known.ID}
		if i%2 == 1 {
			ask.Region, ask.Language = s.Region, primaryTag(known)
		}
		out = append(out, search(ctx, client, ask, up))
	}
	worded := s.Entries[(i*13+5)%n]
	// a language of the chart other than the worded video's where it has
	// one, so that a filter left out shows
	lang, other := "", ""
	for k := range n {
		l := primaryTag(s.Entries[(i*11+3+k)%n])
		if lang == "" {
			lang = l
		}
		if other == "" && l != "" && l != primaryTag(worded) {
			other = l
		}
	}
	if other != "" {
		lang = other
	}
	if w := longestWord(worded.Title); w != "" && lang != "" {
		out = append(out, search(ctx, client, Searched{Query: w, Region: s.Region, Language: lang}, up))
	}
	return out
}

// search asks the site's API for ask, reading its pages until the video
// it wants is among the hits (the first page alone when it wants none).
func search(ctx context.Context, client *http.Client, ask Searched, up func() bool) Searched {
	ask.At = time.Now()
	was := up()
	ask = ask.read(ctx, client)
	ask.Down = !was || !up()
	return ask
}

// read is ask with the hits of its pages, or the error that stopped it.
func (ask Searched) read(ctx context.Context, client *http.Client) Searched {
	q := url.Values{"q": {ask.Query}, "limit": {"50"}}
	if ask.Region != "" {
		q.Set("region", ask.Region)
	}
	if ask.Language != "" {
		q.Set("language", ask.Language)
	}
	for page := 0; page < searchPages; page++ {
		body, err := get(ctx, client, "/api/v1/search?"+q.Encode())
		if err != nil {
			ask.Err = err.Error()
			return ask
		}
		var res struct {
			Hits []struct {
				ID            string   `json:"id"`
				Title         string   `json:"title"`
				AudioLanguage string   `json:"audio_language"`
				Language      string   `json:"language"`
				Regions       []string `json:"regions"`
				Snippet       string   `json:"snippet"`
			} `json:"hits"`
			Next *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			ask.Err = fmt.Sprintf("/api/v1/search?%s: %v", q.Encode(), err)
			return ask
		}
		found := false
		for _, h := range res.Hits {
			ask.Hits = append(ask.Hits, Shown{ID: h.ID, Title: h.Title, AudioLanguage: h.AudioLanguage, Language: h.Language, Regions: h.Regions, Snippet: h.Snippet})
			found = found || h.ID == ask.Want
		}
		ask.More = res.Next != nil
		if ask.Want == "" || found || res.Next == nil {
			return ask
		}
		q.Set("cursor", *res.Next)
	}
	return ask
}

// phrase is title as one quoted phrase of the query language, "" when it
// holds no word.
func phrase(title string) string {
	if !strings.ContainsFunc(title, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return ""
	}
	return `"` + strings.ReplaceAll(title, `"`, " ") + `"`
}

// longestWord is title's longest run of letters, "" for none.
func longestWord(title string) string {
	best := ""
	for _, w := range strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) > len([]rune(best)) {
			best = w
		}
	}
	return best
}

// primaryTag is the primary subtag of a video's language, its spoken
// language's else its text's, lower case; "" when it has neither.
func primaryTag(e Shown) string {
	tag := e.AudioLanguage
	if tag == "" {
		tag = e.Language
	}
	p, _, _ := strings.Cut(strings.ToLower(tag), "-")
	if len(p) < 2 || len(p) > 3 || strings.ContainsFunc(p, func(r rune) bool { return r < 'a' || r > 'z' }) {
		return "" // not a language the API's filter takes
	}
	return p
}

// inLanguage says whether a video is in lang as docs/api.md says it: when
// either of its tags is lang or a narrower form of it, in any case.
func inLanguage(e Shown, lang string) bool {
	lang = strings.ToLower(lang)
	for _, tag := range []string{e.AudioLanguage, e.Language} {
		if t := strings.ToLower(tag); t == lang || strings.HasPrefix(t, lang+"-") {
			return true
		}
	}
	return false
}
