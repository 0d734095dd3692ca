package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

// frontKey names the front page: it lists every charted region, so a
// region charted for the first time changes it.
const frontKey = "front"

// frontTop is how many videos the front page shows of its region.
const frontTop = 10

// frontVary is what the front page's bytes depend on besides the URL:
// the lead comes from the cookie or the browser's languages.
const frontVary = "Accept-Language, Cookie"

type frontView struct {
	shared
	Title   string
	Lead    *frontRegion // nil when no chart is stored
	Why     string       // why it leads (leadChosen...)
	Areas   []area       // every charted region, by area
	Count   int          // how many regions are charted
	Thumbs  bool
	Derived bool
}

// frontRegion is a region's chart, its top frontTop.
type frontRegion struct {
	Region, Name, Href string
	Chart              ChartJSON
}

// frontPage leads with the reader's region (lead.go): its unfiltered
// chart's top videos from the latest run, linking to the whole chart;
// then every charted region by area, each a link that makes it the lead.
func (s *Server) frontPage(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("region") {
		s.chooseRegion(w, r)
		return
	}
	w.Header().Set("Vary", frontVary)
	charted, codes, err := s.chartedRegions(r.Context(), "")
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	l, ok := r.Context().Value(leadKey{}).(lead)
	if !ok { // built outside the kept answers
		l = leadFor(r, charted, codes)
	}
	v := frontView{Title: "Trending on YouTube", Why: l.Why, Count: len(codes), Thumbs: !s.cfg.NoThumbnails, Derived: s.cfg.Derived}
	if l.Region != "" {
		top, err := s.frontTop(r, l.Region)
		if err != nil {
			s.pageFail(w, r, err)
			return
		}
		v.Lead = top
		v.Title = "Trending in " + s.places.in(l.Region)
	}
	v.Areas = s.places.areas(codes, l.Region)
	// The preview's title is the page's, which follows the region it
	// leads with (the page is kept per lead).
	v.Share = share{URL: s.canonical("/"), Type: "website", Title: v.Title,
		Description: fmt.Sprintf("YouTube's trending charts of %d %s, kept up to date: each region's chart, what trends worldwide, and each video's ranks and views over time.",
			len(codes), plural(len(codes), "region", "regions")),
		Feeds: s.feeds()}
	if v.Lead != nil && len(v.Lead.Chart.Entries) > 0 {
		e := v.Lead.Chart.Entries[0]
		v.Share.Image = s.previewImage(e.Thumbnail, e.Title)
	}
	edge.Show(w.Header(), frontKey)
	if v.Lead != nil {
		showChart(w.Header(), v.Lead.Chart)
	}
	s.render(w, r, http.StatusOK, "front", v)
}

// frontTop is region's unfiltered chart, its top frontTop; nil when it
// was pruned since it was listed.
func (s *Server) frontTop(r *http.Request, region string) (*frontRegion, error) {
	depth := store.ChartBare
	if s.cfg.Derived {
		depth = store.ChartMoves
	}
	sc, err := s.cfg.DB.Chart(r.Context(), store.ChartQuery{Region: region, Limit: frontTop, Depth: depth})
	if errors.Is(err, store.ErrNoChart) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &frontRegion{Region: region, Name: s.places.name(region), Href: chartPath(region, ""), Chart: s.chartOf(sc)}, nil
}
