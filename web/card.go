package web

// A video as every reader's output shows it (a chart's row, a hit, a
// video's head), and the links it carries.

import (
	"net/url"
	"unicode"

	"github.com/ingestworks/ingest"
)

// VideoCard is a video as every JSON output shows it: search hits, chart
// entries and a video each embed it, filled by CardOf from the store's one
// read model (ingest.Video), so a field every output shows is added here
// and in CardOf alone.
type VideoCard struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Channel   string `json:"channel"`
	ChannelID string `json:"channel_id"`
	// PublishedAt is when the video was uploaded; Duration its length,
	// ISO 8601 as the upstream sends it (PT4M13S, P0D live).
	PublishedAt *string `json:"published_at"`
	Duration    string  `json:"duration"`
	// Thumbnail is the URL of its default thumbnail; left out when the
	// server shows no thumbnails (--no-thumbnails) or there is none.
	Thumbnail string `json:"thumbnail,omitempty"`
	// AudioLanguage and Language are the owner's BCP-47 tags for the
	// spoken language and the text's, "" when the upstream sent none.
	AudioLanguage string `json:"audio_language"`
	Language      string `json:"language"`
}

// CardOf is v's VideoCard.
func CardOf(v ingest.Video) VideoCard {
	return VideoCard{ID: v.ID, Title: v.Title, Channel: v.ChannelTitle, ChannelID: v.ChannelID, PublishedAt: stamp(v.PublishedAt),
		Duration: v.Duration, Thumbnail: v.Thumbnail, AudioLanguage: v.AudioLanguage, Language: v.Language}
}

// textLang is the language of a video's title and description as a lang
// attribute: the owner's tag for the text, else the one for the spoken
// language (which most owners who give a tag give), but for one that says
// the audio has no words; else, for a title in kana or Hangul, Japanese
// or Korean, whose Han characters a browser draws in the forms of the
// language it is told; "" (unknown, rather than the page's English)
// otherwise.
func textLang(c VideoCard) string {
	switch {
	case c.Language != "":
		return c.Language
	case c.AudioLanguage != "" && c.AudioLanguage != "zxx" && c.AudioLanguage != "und":
		return c.AudioLanguage
	}
	for _, r := range c.Title {
		switch {
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			return "ja"
		case unicode.Is(unicode.Hangul, r):
			return "ko"
		}
	}
	return ""
}

// thumbnail is the URL of a thumbnail the policy lets the page load:
// one on ThumbnailHost, over https; "" for any other.
func thumbnail(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host != ThumbnailHost || u.User != nil {
		return ""
	}
	return u.String()
}

// channelURL is a channel's page on YouTube; "" without an id.
func channelURL(id string) string {
	if id == "" {
		return ""
	}
	return "https://www.youtube.com/channel/" + url.PathEscape(id)
}
