package web

// Atom feeds (RFC 4287) of a region's chart and of the worldwide page, for
// a feed reader to follow. An entry is keyed by its chart and its video,
// so a video that enters the chart is a new entry and one that stays is
// the same entry. An entry's updated is when its content last changed
// (it entered the chart, moved, left a region's chart the worldwide
// entry lists, or its title or channel changed: store.Steady, store.Left),
// and the feed's the
// latest of its entries', so a run that changes nothing changes no byte
// of a feed. Links are absolute under Config.PublicURL, else relative to
// the feed's own address: a kept answer never carries the Host a request
// named.

import (
	"bytes"
	"cmp"
	"crypto/sha1"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
	"github.com/ingestworks/ingest/web/transport"
)

// atomFeed is an Atom feed document.
type atomFeed struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	// Lang is the language of the feed's own words, the site's; each
	// entry's title and author say their own.
	Lang     string      `xml:"xml:lang,attr"`
	ID       string      `xml:"id"`
	Title    string      `xml:"title"`
	Subtitle string      `xml:"subtitle,omitempty"`
	Updated  string      `xml:"updated"`
	Author   atomPerson  `xml:"author"`
	Links    []atomLink  `xml:"link"`
	Entries  []atomEntry `xml:"entry"`
}

type atomPerson struct {
	Lang string `xml:"xml:lang,attr,omitempty"`
	Name string `xml:"name"`
	URI  string `xml:"uri,omitempty"`
}

type atomLink struct {
	Rel   string `xml:"rel,attr"`
	Type  string `xml:"type,attr,omitempty"`
	Href  string `xml:"href,attr"`
	Title string `xml:"title,attr,omitempty"`
}

type atomEntry struct {
	ID      string     `xml:"id"`
	Title   atomText   `xml:"title"`
	Updated string     `xml:"updated"`
	Author  atomPerson `xml:"author"`
	Links   []atomLink `xml:"link"`
	Summary string     `xml:"summary"`
}

// atomText is a text construct in its own language ("" the feed's).
type atomText struct {
	Lang string `xml:"xml:lang,attr,omitempty"`
	Text string `xml:",chardata"`
}

// feedID is a stable IRI for what key names (a feed, or a chart's video):
// a name-based UUID, so that the id needs no host and stays the same from
// run to run.
func feedID(key string) string {
	sum := sha1.Sum([]byte("ingest feed\x00" + key))
	sum[6] = sum[6]&0x0f | 0x50 // version 5: from a name, by SHA-1
	sum[8] = sum[8]&0x3f | 0x80 // the RFC 4122 variant
	h := hex.EncodeToString(sum[:16])
	return "urn:uuid:" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func atomTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// feedEntry is one video of a feed, keyed by the feed's key and its id,
// its title and channel in their languages on region's chart.
func (s *Server) feedEntry(key string, c VideoCard, region string, at time.Time, summary string) atomEntry {
	e := atomEntry{ID: feedID(key + "\x00" + c.ID), Title: atomText{titleLang(c, region), c.Title}, Updated: atomTime(at), Summary: summary,
		Author: atomPerson{Lang: nameLang(c.Channel, region), Name: c.Channel, URI: channelURL(c.ChannelID)},
		Links: []atomLink{{Rel: "alternate", Type: "text/html", Href: s.link("/videos/" + url.PathEscape(c.ID))},
			{Rel: "related", Type: "text/html", Href: youTubeURL(c.ID), Title: "Watch on YouTube"}}}
	if e.Author.Name == "" {
		e.Author.Name = c.ChannelID
	}
	return e
}

// sendFeed writes f as application/atom+xml.
func (s *Server) sendFeed(w http.ResponseWriter, r *http.Request, f atomFeed) {
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	if err := xml.NewEncoder(&buf).Encode(f); err != nil {
		s.pageFail(w, r, fmt.Errorf("feed: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/atom+xml; charset=utf-8")
	w.Header().Set("Cache-Control", transport.CacheFor(http.StatusOK))
	if t, err := time.Parse(time.RFC3339, f.Updated); err == nil {
		setModified(w.Header(), t)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
}

// feedAuthor is who a feed is by: this site, from YouTube's charts.
var feedAuthor = atomPerson{Name: "ingest, from YouTube's charts"}

// chartFeed is a region's latest unfiltered chart, its entries in rank
// order.
func (s *Server) chartFeed(w http.ResponseWriter, r *http.Request) {
	region, err := regionParam(r.PathValue("region"), true)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	c, err := s.cfg.DB.Chart(r.Context(), store.ChartQuery{Region: region, Limit: maxChartLimit, Depth: store.ChartBare})
	if err != nil {
		s.pageFail(w, r, s.chartFeedErr(r, region, err))
		return
	}
	st, err := s.cfg.DB.Steady(r.Context(), region, "", c.RunID)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	name, in, key := s.places.name(region), s.places.in(region), "chart\x00"+region
	f := atomFeed{Lang: "en", ID: feedID(key), Title: "Trending in " + in, Author: feedAuthor,
		Subtitle: "The " + name + " chart of most popular videos as YouTube gave it at each run",
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: s.link(chartPath(region, "") + "/feed")},
			{Rel: "alternate", Type: "text/html", Href: s.link(chartPath(region, ""))}}}
	var latest time.Time
	for _, e := range c.Entries {
		card, since := CardOf(e.Video), st.Since[e.ID]
		latest = maxTime(latest, since)
		f.Entries = append(f.Entries, s.feedEntry(key, card, region, since,
			fmt.Sprintf("#%d in %s since %s, by %s", e.Rank, in, stampTime(st.Held[e.ID]), card.Channel)))
	}
	f.Updated = atomTime(cmp.Or(latest, c.At))
	keys := []string{edge.Feed(region), edge.Chart(region, "")}
	for _, e := range c.Entries {
		keys = append(keys, edge.Video(e.ID))
	}
	edge.Show(w.Header(), keys...)
	s.sendFeed(w, r, f)
}

// chartFeedErr is a chart feed's error: no chart stored is a 404.
func (s *Server) chartFeedErr(r *http.Request, region string, err error) error {
	if errors.Is(err, store.ErrNoChart) {
		return s.noChart(r.Context(), region, "", time.Time{})
	}
	return err
}

// worldwideFeed is the worldwide page as a feed, in its order.
func (s *Server) worldwideFeed(w http.ResponseWriter, r *http.Request) {
	ww, err := s.worldwide(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	since, err := s.worldSince(r, ww)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	// A feed of another length is another feed: its own id and address.
	// Its entries are the same entries, keyed alike.
	key, feedKey, self := "worldwide", "worldwide", "/worldwide/feed"
	if ww.limit != worldwideTop {
		feedKey, self = fmt.Sprintf("worldwide\x00limit=%d", ww.limit), fmt.Sprintf("/worldwide/feed?limit=%d", ww.limit)
	}
	f := atomFeed{Lang: "en", ID: feedID(feedKey), Title: "Trending worldwide", Author: feedAuthor,
		Subtitle: "The videos of every region's latest chart of most popular videos, with where they chart",
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: s.link(self)},
			{Rel: "alternate", Type: "text/html", Href: s.link("/worldwide")}}}
	var latest time.Time
	for _, v := range ww.Videos {
		at := since[v.ID]
		latest = maxTime(latest, at)
		f.Entries = append(f.Entries, s.feedEntry(key, v.VideoCard, v.BestRegion, at, worldSummary(v)))
	}
	// With no chart stored, the feed has no entry to date it by: the
	// epoch, so that it stays the same until the first run.
	f.Updated = atomTime(cmp.Or(latest, time.Unix(0, 0)))
	showWorldwide(w.Header(), ww)
	edge.Show(w.Header(), edge.Feed(worldwideKey))
	s.sendFeed(w, r, f)
}

// worldSummary is a worldwide entry's text: where the video charts, each
// region's rank, best first, and its channel. What it shows of the
// charts is what worldSince dates it by.
func worldSummary(v WorldVideoJSON) string {
	var places []WorldRegionJSON
	for _, a := range v.Areas {
		places = append(places, a.Regions...)
	}
	slices.SortFunc(places, func(a, b WorldRegionJSON) int {
		return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Name, b.Name))
	})
	var b strings.Builder
	fmt.Fprintf(&b, "Charting in %d %s: ", len(places), plural(len(places), "region", "regions"))
	for i, p := range places {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "#%d in %s", p.Rank, p.Name)
	}
	fmt.Fprintf(&b, "; by %s", v.Channel)
	return b.String()
}

// worldSince dates each video of the worldwide page by what its entry
// shows: the latest of when its title or channel changed or its rank
// changed in a region that charts it (store.Steady), and of when it left
// a region's chart that charted it (store.Left). Each region's part of
// the entry is its rank there or its absence, so the date moves with the
// entry's text and with nothing else.
func (s *Server) worldSince(r *http.Request, ww WorldwideJSON) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(ww.Videos))
	shown := map[string][]string{} // the videos shown, by the regions that chart them
	ids := make([]string, 0, len(ww.Videos))
	for _, v := range ww.Videos {
		out[v.ID] = time.Time{}
		ids = append(ids, v.ID)
		for _, a := range v.Areas {
			for _, p := range a.Regions {
				shown[p.Region] = append(shown[p.Region], v.ID)
			}
		}
	}
	for region, ids := range shown {
		st, err := s.cfg.DB.Steady(r.Context(), region, "", ww.runs[region], ids...)
		if err != nil {
			return nil, err
		}
		for id, at := range st.Since {
			if t, ok := out[id]; ok {
				out[id] = maxTime(t, at)
			}
		}
	}
	left, err := s.cfg.DB.Left(r.Context(), ww.runs, ids...)
	if err != nil {
		return nil, err
	}
	for id, at := range left {
		if t, ok := out[id]; ok {
			out[id] = maxTime(t, at)
		}
	}
	return out, nil
}
