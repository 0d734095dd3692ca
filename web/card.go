package web

// A video as every reader's output shows it (a chart's row, a hit, a
// video's head), and the links it carries.

import (
	"net/url"

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

// ownerLang is the owner's tag for a video's words: the text's, else
// the spoken language's (which most owners who give a tag give), but not
// one that says the audio has no words; "" when they gave none.
func (c VideoCard) ownerLang() string {
	if c.Language != "" {
		return c.Language
	}
	if c.AudioLanguage != "zxx" && c.AudioLanguage != "und" {
		return c.AudioLanguage
	}
	return ""
}

// titleLang is the lang of a video's title on region's chart (langOf).
func titleLang(c VideoCard, region string) string {
	return langOf(c.Title, region, c.ownerLang())
}

// videoLang is the language a chart's tabs put a video in on region's
// chart: its owner's tag for the audio, else for the text, unless its
// title's script gainsays it; else its title's (langOf).
func videoLang(c VideoCard, region string) string {
	tag := c.AudioLanguage
	if tag == "" || tag == "zxx" || tag == "und" {
		tag = c.Language
	}
	return langOf(c.Title, region, tag)
}

// wordsLang is the lang of a video's other words (its description, a
// tag) on region's chart: their own script, the owner's tag a hint.
func wordsLang(text string, c VideoCard, region string) string {
	return langOf(text, region, c.ownerLang())
}

// nameLang is the lang of a name no tag speaks for (a channel's) on
// region's chart: its script and the region alone.
func nameLang(name, region string) string {
	return langOf(name, region, "")
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

// placed is a video shown on region's chart: what the byline and the
// YouTube link draw, each string in its own language.
type placed struct {
	VideoCard
	Region string
}

func placedIn(c VideoCard, region string) placed { return placed{c, region} }

// firstOf is the first of regions, "" none: the region a hit's or a
// video's words are read by (where it charts first).
func firstOf(regions []string) string {
	if len(regions) == 0 {
		return ""
	}
	return regions[0]
}
