package web

// What a reader's page tells those who read it without a person: link
// previews (OpenGraph, Twitter's card), crawlers (the canonical address)
// and feed readers (autodiscovery). Each reader page carries a share,
// which the layout writes into the page's head (docs/reference/api/links.md, "Links,
// previews and crawlers").

import (
	"net/url"
	"path"
	"strings"
	"time"
)

// share is what a page says of itself in its head.
type share struct {
	// URL is the page's canonical address, absolute under
	// Config.PublicURL; "" without one, and then no og:url or canonical
	// link is written (a guess from Host would let any request name it).
	URL string
	// Type is og:type; Title and Description the preview's words.
	Type, Title, Description string
	// Image is the preview's picture; nil for none.
	Image *shareImage
	// Feeds are the Atom feeds the page offers, the page's own first.
	Feeds []shareFeed
	// NoIndex asks search engines to keep the page out of their index: a
	// page robots.txt keeps them off, which names no canonical address.
	NoIndex bool
}

// shareImage is a picture of a preview with its size, which previewers
// use to lay the card out before they fetch it.
type shareImage struct {
	URL           string
	Width, Height int
	Alt           string
}

// shareFeed is one feed of a page's autodiscovery links.
type shareFeed struct {
	Href, Title string
}

// shared is embedded in a reader page's data: its share.
type shared struct{ Share share }

func (p shared) sharing() *share { return &p.Share }

// sharer is a page's data that carries a share: the layout asks for it
// through the template function "sharing", so pages without one (the
// operator's, sign-in, errors) write none.
type sharer interface{ sharing() *share }

// sharing is the share of a page's data, nil for a page without one.
func sharing(data any) *share {
	if sh, ok := data.(sharer); ok {
		return sh.sharing()
	}
	return nil
}

// link is p (a path from the root, with its query) as a reader's link:
// absolute under Config.PublicURL when one is set, else as it is.
func (s *Server) link(p string) string {
	if s.cfg.PublicURL == nil {
		return p
	}
	u := *s.cfg.PublicURL
	rel, err := url.Parse(p)
	if err != nil {
		return p
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + rel.Path
	u.RawPath, u.RawQuery, u.Fragment = "", rel.RawQuery, ""
	return u.String()
}

// canonical is p's absolute address under Config.PublicURL, "" without one.
func (s *Server) canonical(p string) string {
	if s.cfg.PublicURL == nil {
		return ""
	}
	return s.link(p)
}

// worldFeed is the site's feed, which every reader page offers: what
// trends in every region.
var worldFeed = shareFeed{Href: "/worldwide/feed", Title: "Trending worldwide (Atom feed)"}

// feeds are a page's feeds as its head links them: absolute under
// Config.PublicURL, and the worldwide one after the page's own.
func (s *Server) feeds(own ...shareFeed) []shareFeed {
	var out []shareFeed
	seen := map[string]bool{}
	for _, f := range append(own, worldFeed) {
		if !seen[f.Href] {
			seen[f.Href] = true
			out = append(out, shareFeed{Href: s.link(f.Href), Title: f.Title})
		}
	}
	return out
}

// previewSize is the picture a preview shows of a video: hqdefault.jpg,
// which YouTube serves for every video at 480x360 (4:3, letterboxed for a
// 16:9 video), where mqdefault (320x180) is under what some previewers
// take, and sddefault and maxresdefault are missing for some videos.
const (
	previewFile   = "hqdefault.jpg"
	previewWidth  = 480
	previewHeight = 360
)

// previewImage is the preview's picture of a video whose stored thumbnail
// is on ThumbnailHost; nil for any other, or with thumbnails off.
func (s *Server) previewImage(thumb, alt string) *shareImage {
	if s.cfg.NoThumbnails {
		return nil
	}
	u := sizedThumbnail(thumb, previewFile)
	if u == "" {
		return nil
	}
	return &shareImage{URL: u, Width: previewWidth, Height: previewHeight, Alt: alt}
}

// sizedThumbnail is the picture named file beside a video's stored
// thumbnail on ThumbnailHost (i.ytimg.com/vi/ID/default.jpg); "" for a
// thumbnail the policy does not let a page load, or not of that shape.
func sizedThumbnail(raw, file string) string {
	s := thumbnail(raw)
	if s == "" {
		return ""
	}
	u, _ := url.Parse(s) // thumbnail parsed it already
	dir, name := path.Split(u.Path)
	if !strings.HasPrefix(dir, "/vi/") || strings.Count(dir, "/") != 3 || path.Ext(name) != ".jpg" {
		return ""
	}
	u.Path, u.RawQuery = dir+file, ""
	return u.String()
}

// chartShare is a chart page's share: its address without an order, the
// latest chart's without a run and an earlier run's its permalink (the
// run's own time), so that a link to an earlier run previews as that run;
// its first video's picture, and the region's feed.
func (s *Server) chartShare(c ChartJSON, title string) share {
	label := s.places.chart(c.Region, c.Category)
	if c.Language != "" {
		label += " · " + languageName(c.Language)
	}
	var at time.Time
	if c.NextRunID != nil {
		at = c.at
		title += " at " + stampTime(c.at)
	}
	sh := share{URL: s.canonical(chartHref(c.Region, c.Category, c.Language, at)), Type: "website", Title: title,
		Description: "The videos trending on YouTube in " + withThe(label) + ", as YouTube gave them at " + stampTime(c.at) + ".",
		Feeds:       s.feeds(shareFeed{Href: chartPath(c.Region, "") + "/feed", Title: "Trending in " + s.places.in(c.Region) + " (Atom feed)"})}
	if len(c.Entries) > 0 {
		sh.Image = s.previewImage(c.Entries[0].Thumbnail, c.Entries[0].Title)
	}
	return sh
}
