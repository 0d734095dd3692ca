package web

// What trends worldwide: the videos of every region's latest chart, each
// with the regions it charts in, named and grouped by area, and its best
// rank: its JSON, its read, the API's answer and the page.
//
// A video's regions and its rank in each are the charts' own data, shown
// under every standing. Ordering the videos by how many regions chart
// them is a figure ingest computes, so it is the order only where the
// computed figures are shown (Config.Derived), labelled; otherwise the
// videos go by their best rank, YouTube's own figure (docs/explanation/terms.md).

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/ingestworks/ingest/store"
)

// worldwideTop is how many videos the page and the JSON show unless asked.
const worldwideTop = 50

// WorldwideJSON is the videos of the regions' latest charts, the ones in
// the most regions (or, without the computed figures, at the best rank)
// first.
type WorldwideJSON struct {
	// Regions is how many regions' unfiltered charts were read; Oldest and
	// At the earliest and the latest of their runs.
	Regions int     `json:"regions"`
	Oldest  *string `json:"oldest"`
	At      *string `json:"at"`
	// Order is "regions" (how many regions chart a video, then the best
	// rank: computed by ingest) or "best_rank" (then the region's name).
	Order string `json:"order"`
	// Derived says the order is the one ingest computes (Computed names
	// it): the --derived setting (docs/explanation/terms.md, III.E.4.h).
	Derived  bool             `json:"derived"`
	Computed []string         `json:"computed"`
	Videos   []WorldVideoJSON `json:"videos"`
	at       time.Time
	runs     map[string]int64 // each region's run read, by region
	limit    int              // how many videos were asked for
}

// WorldVideoJSON is one video and where it charts now.
type WorldVideoJSON struct {
	VideoCard
	// BestRank is its best rank in the charts now, in BestRegion.
	BestRank   int    `json:"best_rank"`
	BestRegion string `json:"best_region"`
	// RegionCount is how many regions chart it: the length of Areas'
	// regions together.
	RegionCount int             `json:"region_count"`
	Areas       []WorldAreaJSON `json:"areas"`
}

// WorldAreaJSON is a video's regions in one area, by name.
type WorldAreaJSON struct {
	Area    string            `json:"area"`
	Regions []WorldRegionJSON `json:"regions"`
}

// WorldRegionJSON is a video's place in one region's latest chart.
type WorldRegionJSON struct {
	Region string  `json:"region"`
	Name   string  `json:"name"`
	Rank   int     `json:"rank"`
	At     *string `json:"at"` // the chart's run
}

// worldComputed is what the worldwide answer carries that ingest computes.
var worldComputed = []string{"order"}

// worldVideo is a video as the read gathers it, region after region: its
// id and key, and its places; its card is read for the videos shown.
type worldVideo struct {
	id     string
	vid    int64
	card   VideoCard
	places []worldPlace
}

type worldPlace struct {
	region, name string
	rank         int
	at           time.Time
}

func (s *Server) worldwide(r *http.Request) (WorldwideJSON, error) {
	limit, err := limitParam(r, worldwideTop, maxChartLimit)
	if err != nil {
		return WorldwideJSON{}, err
	}
	entries, err := s.cfg.DB.LatestCharts(r.Context())
	if err != nil {
		return WorldwideJSON{}, err
	}
	w := WorldwideJSON{Order: "best_rank", Derived: s.cfg.Derived, Computed: worldComputed, Videos: []WorldVideoJSON{}, runs: map[string]int64{}, limit: limit}
	byID := map[string]*worldVideo{}
	var oldest time.Time
	for i, e := range entries {
		if i == 0 || e.Region != entries[i-1].Region {
			w.Regions++
			w.runs[e.Region] = e.RunID
			w.at = maxTime(w.at, e.At)
			if oldest.IsZero() || e.At.Before(oldest) {
				oldest = e.At
			}
		}
		s.gather(byID, e)
	}
	if w.Regions > 0 {
		w.At, w.Oldest = stamp(w.at), stamp(oldest)
	}
	shown := s.worldOrder(byID)[:min(limit, len(byID))]
	vids := make([]int64, len(shown))
	for i, v := range shown {
		vids[i] = v.vid
	}
	stored, err := s.cfg.DB.VideosOf(r.Context(), vids)
	if err != nil {
		return WorldwideJSON{}, err
	}
	for _, v := range shown {
		sv, ok := stored[v.vid]
		if !ok {
			return WorldwideJSON{}, fmt.Errorf("worldwide: video %s went while the charts were read", v.id)
		}
		v.card = CardOf(sv.Video)
		if s.cfg.NoThumbnails {
			v.card.Thumbnail = ""
		}
		w.Videos = append(w.Videos, s.worldVideoJSON(v))
	}
	if s.cfg.Derived {
		w.Order = "regions"
	}
	return w, nil
}

// gather adds an entry of a region's chart to the videos by id.
func (s *Server) gather(byID map[string]*worldVideo, e store.LatestEntry) {
	v := byID[e.ID]
	if v == nil {
		v = &worldVideo{id: e.ID, vid: e.Vid}
		byID[e.ID] = v
	}
	v.places = append(v.places, worldPlace{region: e.Region, name: s.places.name(e.Region), rank: e.Rank, at: e.At})
}

// best is a video's best place: its best rank, then the region's name.
func (v *worldVideo) best() worldPlace {
	return slices.MinFunc(v.places, func(a, b worldPlace) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.name, b.name))
	})
}

// worldOrder is the videos in the answer's order: by how many regions
// chart them when the computed figures are shown, else by best rank; ties
// by best rank, the best region's name and the id, so that the order is
// the same at every build.
func (s *Server) worldOrder(byID map[string]*worldVideo) []*worldVideo {
	vs := make([]*worldVideo, 0, len(byID))
	best := make(map[*worldVideo]worldPlace, len(byID))
	for _, v := range byID {
		vs = append(vs, v)
		best[v] = v.best()
	}
	slices.SortFunc(vs, func(a, b *worldVideo) int {
		ba, bb := best[a], best[b]
		byRank := cmp.Or(cmp.Compare(ba.rank, bb.rank), cmp.Compare(ba.name, bb.name), cmp.Compare(a.id, b.id))
		if s.cfg.Derived {
			return cmp.Or(cmp.Compare(len(b.places), len(a.places)), byRank)
		}
		return byRank
	})
	return vs
}

// worldVideoJSON is v with its regions grouped by area, in the areas'
// order, each area's by name.
func (s *Server) worldVideoJSON(v *worldVideo) WorldVideoJSON {
	best := v.best()
	j := WorldVideoJSON{VideoCard: v.card, BestRank: best.rank, BestRegion: best.region, RegionCount: len(v.places), Areas: []WorldAreaJSON{}}
	codes := make([]string, len(v.places))
	at := map[string]worldPlace{}
	for i, p := range v.places {
		codes[i], at[p.region] = p.region, p
	}
	for _, a := range s.places.areas(codes, "") {
		wa := WorldAreaJSON{Area: a.Name, Regions: []WorldRegionJSON{}}
		for _, o := range a.Regions {
			p := at[o.Code]
			wa.Regions = append(wa.Regions, WorldRegionJSON{Region: p.region, Name: p.name, Rank: p.rank, At: stamp(p.at)})
		}
		j.Areas = append(j.Areas, wa)
	}
	return j
}

func (s *Server) apiWorldwide(w http.ResponseWriter, r *http.Request) {
	ww, err := s.worldwide(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	showWorldwide(w.Header(), ww)
	replyJSON(w, http.StatusOK, ww)
}

// worldwideKey names the worldwide page, its JSON and its feed (with
// edge.Feed): every landing of a region's chart changes them.
const worldwideKey = "worldwide"

// showWorldwide names what an answer of ww shows: the worldwide page and
// each video.
func showWorldwide(h http.Header, ww WorldwideJSON) {
	cards := make([]VideoCard, len(ww.Videos))
	for i, v := range ww.Videos {
		cards[i] = v.VideoCard
	}
	showCards(h, []string{worldwideKey}, cards...)
}

type worldwideView struct {
	shared
	Title  string
	World  WorldwideJSON
	Thumbs bool
}

func (s *Server) worldwidePage(w http.ResponseWriter, r *http.Request) {
	ww, err := s.worldwide(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	sh := share{URL: s.canonical("/worldwide"), Type: "website", Title: "Trending worldwide",
		Description: fmt.Sprintf("The videos of %d %s YouTube trending charts, with where each charts.", ww.Regions, plural(ww.Regions, "region's", "regions'")),
		Feeds:       s.feeds()}
	if len(ww.Videos) > 0 {
		sh.Image = s.previewImage(ww.Videos[0].Thumbnail, ww.Videos[0].Title)
	}
	showWorldwide(w.Header(), ww)
	s.render(w, r, http.StatusOK, "worldwide", worldwideView{shared: shared{sh}, Title: "Trending worldwide", World: ww, Thumbs: !s.cfg.NoThumbnails})
}
