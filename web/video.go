package web

// A video: its JSON (its place in every chart and its counts over time),
// its read, the API's answer and the page.

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/ingestworks/ingest/web/edge"
)

// VideoJSON is a video with its place in every chart over time and its
// view counts over time.
type VideoJSON struct {
	VideoCard
	Description string         `json:"description"`
	Tags        []string       `json:"tags"`
	Category    string         `json:"category_id"`
	Views       *int64         `json:"views"`
	Likes       *int64         `json:"likes"`
	Comments    *int64         `json:"comments"`
	FirstSeen   *string        `json:"first_seen"`
	LastSeen    *string        `json:"last_seen"`
	Regions     []VideoRegion  `json:"regions"`
	History     []HistoryPoint `json:"history"`
	Truncated   bool           `json:"history_truncated"`
	// Counts are the counts the charts' entries and tracking
	// (videos.batchGetStats, the video_stats table) read, the highest of
	// each step (store.HistoryStep), oldest first: the views over time,
	// also after the video left every chart.
	Counts []CountJSON `json:"views_over_time"`
}

// VideoRegion is a video's place in one chart (a region's, or one of its
// categories'): its latest and best rank.
type VideoRegion struct {
	Region   string  `json:"region"`
	Category string  `json:"category"`
	Rank     int     `json:"rank"`
	BestRank int     `json:"best_rank"`
	At       *string `json:"at"`
	Entries  int     `json:"entries"`
}

// HistoryPoint is one trending entry of a video.
type HistoryPoint struct {
	RunID    int64   `json:"run_id"`
	Region   string  `json:"region"`
	Category string  `json:"category"`
	At       *string `json:"at"`
	Rank     int     `json:"rank"`
	Views    *int64  `json:"views"` // null: hidden
	Likes    *int64  `json:"likes"`
	Comments *int64  `json:"comments"`
	at       time.Time
}

// CountJSON is a video's counts at one moment.
type CountJSON struct {
	At       *string `json:"at"`
	Views    int64   `json:"views"`
	Likes    *int64  `json:"likes"`
	Comments *int64  `json:"comments"`
	at       time.Time
}

func (s *Server) video(r *http.Request) (VideoJSON, error) {
	id := r.PathValue("id")
	if id == "" || len(id) > 64 {
		return VideoJSON{}, badParam("id", "must be a video id, got %q", id)
	}
	h, ok, err := s.cfg.DB.VideoHistory(r.Context(), id, time.Time{})
	if err != nil {
		return VideoJSON{}, err
	}
	if !ok {
		return VideoJSON{}, s.missing(r, id)
	}
	hist, truncated, err := s.cfg.DB.RecentEntries(r.Context(), id, maxHistory)
	if err != nil {
		return VideoJSON{}, err
	}
	v := h.Video
	j := VideoJSON{VideoCard: CardOf(v.Video), Description: v.Description, Tags: v.Tags,
		Category: v.CategoryID, Views: v.ViewCount, Likes: v.LikeCount, Comments: v.CommentCount, FirstSeen: stamp(v.FirstSeen),
		LastSeen: stamp(v.LastSeen), Regions: []VideoRegion{}, History: []HistoryPoint{}, Counts: []CountJSON{}}
	if j.Tags == nil {
		j.Tags = []string{}
	}
	if s.cfg.NoThumbnails {
		j.Thumbnail = ""
	}
	for _, c := range h.Charts {
		j.Regions = append(j.Regions, VideoRegion{Region: c.Region, Category: c.Category, Rank: c.LastRank,
			BestRank: c.BestRank, At: stamp(c.Last), Entries: c.Entries})
	}
	j.Truncated = truncated
	for _, p := range hist {
		j.History = append(j.History, HistoryPoint{RunID: p.RunID, Region: p.Region, Category: p.Category,
			At: stamp(p.At), Rank: p.Rank, Views: p.Views, Likes: p.Likes, Comments: p.Comments, at: p.At})
	}
	for _, p := range h.Views[max(0, len(h.Views)-maxHistory):] {
		j.Counts = append(j.Counts, CountJSON{At: stamp(p.At), Views: p.Views, Likes: p.Likes, Comments: p.Comments, at: p.At})
	}
	return j, nil
}

// missing is why video id is not stored: gone upstream (410, with the day
// its tombstone keeps), or never stored or pruned (404).
func (s *Server) missing(r *http.Request, id string) error {
	at, err := s.cfg.DB.GoneAt(r.Context(), id)
	if err != nil {
		return err
	}
	if !at.IsZero() {
		return &gone{fmt.Sprintf("video %s is gone: the upstream stopped returning it (deleted, or made private) on %s, "+
			"so its data was deleted; only its id and that day are kept (docs/explanation/terms.md)", id, at.UTC().Format(time.DateOnly))}
	}
	return &notFound{code: "no_video", msg: "no video " + id + " is stored"}
}

func (s *Server) apiVideo(w http.ResponseWriter, r *http.Request) {
	v, err := s.video(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	edge.Show(w.Header(), edge.Video(v.ID))
	replyJSON(w, http.StatusOK, v)
}

type videoView struct {
	shared
	Title   string
	Video   VideoJSON
	Ranks   LineChart
	Views   LineChart
	YouTube string
	Region  string // where it charts first: its words are read by it
	Derived bool   // the computed figures are shown, labelled (Config.Derived)
}

// youTubeURL is a video's page on YouTube.
func youTubeURL(id string) string {
	return "https://www.youtube.com/watch?v=" + url.QueryEscape(id)
}

func (s *Server) videoPage(w http.ResponseWriter, r *http.Request) {
	v, err := s.video(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	edge.Show(w.Header(), edge.Video(v.ID))
	ranks, views := videoSeries(v, s.places)
	desc := clip(v.Description, 200)
	if desc == "" {
		desc = v.Channel + " on YouTube"
	}
	sh := share{URL: s.canonical("/videos/" + url.PathEscape(v.ID)), Type: "video.other", Title: v.Title, Description: desc,
		Image: s.previewImage(v.Thumbnail, v.Title), Feeds: s.feeds()}
	s.render(w, r, http.StatusOK, "video", videoView{shared: shared{sh}, Title: v.Title, Video: v, YouTube: youTubeURL(v.ID), Derived: s.cfg.Derived, Region: v.region(),
		Ranks: lineChart(ranks, true, func(f float64) string { return fmt.Sprintf("#%.0f", f) }, "rank (#1 at the top)"),
		Views: lineChart(views, false, compact, "views")})
}

// videoSeries splits a video's history into a rank line per chart, and
// draws its views twice: as the charts' entries saw them, and as every read
// (entries and tracking) did, which goes on after the video left the charts.
func videoSeries(v VideoJSON, names places) (ranks, views []series) {
	byChart := map[string]*series{}
	var order []string
	charts := series{name: "views in charts"}
	for _, p := range v.History {
		name := names.chart(p.Region, p.Category)
		s := byChart[name]
		if s == nil {
			s = &series{name: name}
			byChart[name] = s
			order = append(order, name)
		}
		s.t, s.v = append(s.t, p.at), append(s.v, float64(p.Rank))
		if p.Views != nil { // a hidden count is no point of the line
			charts.t, charts.v = append(charts.t, p.at), append(charts.v, float64(*p.Views))
		}
	}
	sort.Strings(order)
	for _, name := range order {
		ranks = append(ranks, *byChart[name])
	}
	if len(charts.t) > 0 {
		views = append(views, charts)
	}
	all := series{name: "views, charts and tracking"}
	for _, p := range v.Counts {
		all.t, all.v = append(all.t, p.at), append(all.v, float64(p.Views))
	}
	if len(all.t) > 0 {
		views = append(views, all)
	}
	return ranks, views
}

// region is where the video charts first, "" nowhere: its words are read
// by that region's languages.
func (v VideoJSON) region() string {
	if len(v.Regions) == 0 {
		return ""
	}
	return v.Regions[0].Region
}
