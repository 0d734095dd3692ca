package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// SearchResult is a page of search hits.
type SearchResult struct {
	Query      string    `json:"query"`
	Region     string    `json:"region"`
	Category   string    `json:"category"`
	Language   string    `json:"language"`
	Sort       string    `json:"sort"` // relevance, views or newest
	Hits       []HitJSON `json:"hits"`
	NextCursor *string   `json:"next_cursor"`
	// Total is how many videos match, counted up to maxCount; TotalMore
	// says there are more than Total.
	Total     int  `json:"total"`
	TotalMore bool `json:"total_is_lower_bound"`
	// Offset is how many hits came before this page: the first one is
	// number Offset+1.
	Offset int `json:"offset"`
}

// maxCount is how far a search's matches are counted.
const maxCount = 1000

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

// HitJSON is one video that matched; Snippet marks the matched words
// between [ and ].
type HitJSON struct {
	VideoCard
	Snippet string `json:"snippet"`
	// description is the start of the video's description, which the
	// page shows under a hit whose snippet is its title.
	description string
	Regions     []string `json:"regions"`
	Views       int64    `json:"views"` // the latest count, 0 hidden
	// ViewsAt is when that count was fetched from the upstream.
	ViewsAt   *string `json:"views_at"`
	Score     float64 `json:"score"`
	published time.Time
}

// Hits are the store's hits as JSON: the web's and `ingest search --json`.
func Hits(hits []store.Hit) []HitJSON {
	out := make([]HitJSON, 0, len(hits))
	for _, h := range hits {
		regions := h.Regions
		if regions == nil {
			regions = []string{}
		}
		var views int64
		if h.ViewCount != nil {
			views = *h.ViewCount
		}
		out = append(out, HitJSON{VideoCard: CardOf(h.Video), Snippet: h.Snippet, Regions: regions, Views: views,
			ViewsAt: stamp(h.LastSeen), Score: h.Score, description: h.Description, published: h.PublishedAt})
	}
	return out
}

func (s *Server) search(r *http.Request) (SearchResult, error) {
	q, err := searchQuery(r)
	if err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Query: q, Hits: []HitJSON{}}
	if res.Region, err = regionParam(r.URL.Query().Get("region"), false); err != nil {
		return res, err
	}
	if res.Category, err = categoryParam(r); err != nil {
		return res, err
	}
	if res.Language, err = languageParam(r); err != nil {
		return res, err
	}
	if res.Sort, err = searchSortParam(r); err != nil {
		return res, err
	}
	limit, err := limitParam(r, 20, maxSearchLimit)
	if err != nil {
		return res, err
	}
	offset, err := decodeCursor(r, "search")
	if err != nil {
		return res, err
	}
	if offset >= searchWindow {
		return res, badParam("cursor", "searches page at most %d hits deep", searchWindow)
	}
	hits, err := s.searchHits(r.Context(), q, store.SearchOptions{Region: res.Region, Language: res.Language}, res.Category, res.Sort, int(offset)+limit+1, &res)
	if err != nil {
		return res, searchErr(err)
	}
	res.Offset = int(offset)
	from, to := min(int(offset), len(hits)), min(int(offset)+limit, len(hits))
	res.Hits = append(res.Hits, Hits(hits[from:to])...)
	if s.cfg.NoThumbnails {
		for i := range res.Hits {
			res.Hits[i].Thumbnail = ""
		}
	}
	if len(hits) > to && to < searchWindow {
		c := encodeCursor("search", int64(to))
		res.NextCursor = &c
	}
	return res, nil
}

// searchHits asks the store for n hits and counts them all into res; with
// a category, it filters the whole window by the videos' categories (and
// counts what the window holds); in another order than relevance, it
// orders the whole window (the searchWindow best matches).
func (s *Server) searchHits(ctx context.Context, q string, opts store.SearchOptions, category, order string, n int, res *SearchResult) ([]store.Hit, error) {
	if category == "" {
		opts.Limit = min(n, searchWindow)
		if order != "relevance" {
			opts.Limit = searchWindow
		}
		hits, total, err := s.cfg.DB.SearchCounted(ctx, q, opts, maxCount)
		res.Total, res.TotalMore = min(total, maxCount), total > maxCount
		sortHits(hits, order)
		return hits[:min(n, len(hits))], err
	}
	opts.Limit = searchWindow
	hits, err := s.cfg.DB.Search(ctx, q, opts)
	if err != nil || len(hits) == 0 {
		return hits, err
	}
	sortHits(hits, order)
	full := len(hits) == searchWindow
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	cats, err := s.cfg.DB.VideoCategories(ctx, ids)
	if err != nil {
		return nil, err
	}
	kept := hits[:0]
	for _, h := range hits {
		if cats[h.ID] == category {
			kept = append(kept, h)
		}
	}
	res.Total, res.TotalMore = len(kept), full
	return kept[:min(n, len(kept))], nil
}

// searchSortParam reads a search's ?sort=: relevance (the default),
// views (most first) or newest (uploaded last first).
func searchSortParam(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("sort"); v {
	case "", "relevance":
		return "relevance", nil
	case "views", "newest":
		return v, nil
	default:
		return "", badParam("sort", "must be relevance, views or newest, got %q", v)
	}
}

// sortHits orders hits by views or upload time, best first; relevance
// keeps the store's order.
func sortHits(hits []store.Hit, order string) {
	switch order {
	case "views":
		sort.SliceStable(hits, func(i, j int) bool {
			a, b := hits[i].ViewCount, hits[j].ViewCount
			return a != nil && (b == nil || *a > *b)
		})
	case "newest":
		sort.SliceStable(hits, func(i, j int) bool { return hits[i].PublishedAt.After(hits[j].PublishedAt) })
	}
}

// ChartJSON is a region's chart (or one category's) at one run, with each
// video's movement since that chart's run before.
type ChartJSON struct {
	Region    string  `json:"region"`
	Category  string  `json:"category"` // "": the chart of every category
	Language  string  `json:"language"` // "": videos in every language
	RunID     int64   `json:"run_id"`
	At        *string `json:"at"`
	Status    string  `json:"status"`
	Complete  bool    `json:"complete"`
	PrevRunID *int64  `json:"previous_run_id"`
	PrevAt    *string `json:"previous_at"`
	NextRunID *int64  `json:"next_run_id"`
	NextAt    *string `json:"next_at"`
	// DayAgoRunID is the chart's run current a day before this one: the
	// entries' day_movement is against it.
	DayAgoRunID *int64  `json:"day_ago_run_id"`
	DayAgoAt    *string `json:"day_ago_at"`
	// Derived says whether the entries carry the figures ingest computes
	// from its stored runs rather than receives (Computed names them):
	// the --derived setting (docs/terms.md, III.E.4.h). Without it they are
	// null.
	Derived            bool        `json:"derived"`
	Computed           []string    `json:"computed"`
	Entries            []EntryJSON `json:"entries"`
	at, prevAt, nextAt time.Time
}

// ComputedFields are the chart entries' fields ingest computes.
var ComputedFields = []string{"movement", "new", "day_movement", "peak_rank", "days_on_chart", "views_trend", "views_gained", "views_gained_24h"}

// EntryJSON is one video in a chart. Movement is places climbed since the
// previous run (negative: fell); New is true when it was not in it.
type EntryJSON struct {
	Rank     int  `json:"rank"`
	PrevRank *int `json:"previous_rank"`
	Movement int  `json:"movement"`
	New      bool `json:"new"`
	VideoCard
	Category  string  `json:"category_id"`
	Views     int64   `json:"views"` // at this entry, 0 hidden
	ViewTrend []int64 `json:"views_trend"`
	// DayMovement is places climbed since the chart a day before; nil
	// when the video was not in it (or there is no such chart).
	DayMovement *int `json:"day_movement"`
	// Gained is the views gained since the chart's previous run, Gained24
	// since its run a day before; nil when the video was not in it.
	Gained   *int64 `json:"views_gained"`
	Gained24 *int64 `json:"views_gained_24h"`
	// PeakRank is the best rank in this chart up to this run; Days the
	// days (UTC) the video was in it.
	PeakRank int `json:"peak_rank"`
	Days     int `json:"days_on_chart"`
	// ViewsAt is when Views was fetched from the upstream: the run's time.
	ViewsAt *string `json:"views_at"`
	derived bool
}

// MarshalJSON writes the computed fields (ComputedFields) as null when
// the chart does not carry them.
func (e EntryJSON) MarshalJSON() ([]byte, error) {
	type plain EntryJSON
	if e.derived {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		Movement    *int    `json:"movement"`
		New         *bool   `json:"new"`
		DayMovement *int    `json:"day_movement"`
		Gained      *int64  `json:"views_gained"`
		Gained24    *int64  `json:"views_gained_24h"`
		PeakRank    *int    `json:"peak_rank"`
		Days        *int    `json:"days_on_chart"`
		ViewTrend   []int64 `json:"views_trend"`
	}{plain: plain(e)})
}

func (s *Server) chart(r *http.Request) (ChartJSON, error) {
	region, err := regionParam(r.PathValue("region"), true)
	if err != nil {
		return ChartJSON{}, err
	}
	category, err := categoryParam(r)
	if err != nil {
		return ChartJSON{}, err
	}
	at, err := timeParam(r, "at")
	if err != nil {
		return ChartJSON{}, err
	}
	limit, err := limitParam(r, maxChartLimit, maxChartLimit)
	if err != nil {
		return ChartJSON{}, err
	}
	language, err := languageParam(r)
	if err != nil {
		return ChartJSON{}, err
	}
	depth := store.ChartFull
	if !s.cfg.Derived { // the history is read for the computed figures alone
		depth = store.ChartPlain
	}
	c, err := s.cfg.DB.Chart(r.Context(), store.ChartQuery{Region: region, Category: category, Language: language,
		At: at, Limit: limit, Depth: depth})
	if errors.Is(err, store.ErrNoChart) {
		return ChartJSON{}, s.noChart(r.Context(), region, category, at)
	}
	if err != nil {
		return ChartJSON{}, err
	}
	return s.chartOf(c), nil
}

// noChart is why a chart has no run to show: none stored, or none by at
// when its first run came later (which it names).
func (s *Server) noChart(ctx context.Context, region, category string, at time.Time) error {
	nf := &notFound{code: "no_chart", msg: "no chart of " + chartLabel(region, category) + " stored" + atText(at)}
	if at.IsZero() {
		return nf
	}
	first, ok, err := s.cfg.DB.FirstChartAt(ctx, region, category)
	if err != nil {
		return err
	}
	if ok {
		nf.earliest = first
		nf.msg += "; its earliest run started at " + first.Format(time.RFC3339) + " (ask for at= then or later)"
	}
	return nf
}

func atText(at time.Time) string {
	if at.IsZero() {
		return ""
	}
	return " at or before " + at.UTC().Format(time.RFC3339)
}

// ChartOf is a stored chart as the API answers it, with the figures
// ingest computes when derived says so.
func ChartOf(c store.Chart, derived bool) ChartJSON {
	j := ChartJSON{Region: c.Region, Category: c.Category, Language: c.Language, RunID: c.RunID, At: stamp(c.At), Status: string(c.Status), Complete: c.Complete,
		PrevAt: stamp(c.PrevAt), NextAt: stamp(c.NextAt), Entries: []EntryJSON{}, at: c.At, prevAt: c.PrevAt, nextAt: c.NextAt,
		Derived: derived, Computed: ComputedFields}
	if c.PrevRun != 0 {
		j.PrevRunID = &c.PrevRun
	}
	if c.NextRun != 0 {
		j.NextRunID = &c.NextRun
	}
	if c.DayRun != 0 {
		j.DayAgoRunID, j.DayAgoAt = &c.DayRun, stamp(c.DayAt)
	}
	for _, e := range c.Entries {
		ej := EntryJSON{Rank: e.Rank, VideoCard: CardOf(e.Video), Category: e.CategoryID,
			Views: e.Views, ViewTrend: e.ViewTrend, New: c.PrevRun != 0 && e.PrevRank == 0,
			PeakRank: e.Peak, Days: e.Days, ViewsAt: stamp(c.At), derived: derived}
		if e.PrevRank != 0 {
			p := e.PrevRank
			ej.PrevRank, ej.Movement = &p, p-e.Rank
			if e.Views != 0 && e.PrevViews != 0 {
				g := e.Views - e.PrevViews
				ej.Gained = &g
			}
		}
		if e.DayRank != 0 {
			m := e.DayRank - e.Rank
			ej.DayMovement = &m
			if e.Views != 0 && e.DayViews != 0 {
				g := e.Views - e.DayViews
				ej.Gained24 = &g
			}
		}
		if ej.ViewTrend == nil {
			ej.ViewTrend = []int64{}
		}
		j.Entries = append(j.Entries, ej)
	}
	return j
}

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
	Views    int64   `json:"views"`
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

// QuotaJSON is `ingest report --json` with the units of the last 30 days.
type QuotaJSON struct {
	report.JSON
	Daily []DailyJSON `json:"daily"`
	rep   *report.Report
}

// DailyJSON is a pool's units a day, UTC, oldest first.
type DailyJSON struct {
	Pool  string  `json:"pool"`
	Start string  `json:"start"`
	Units []int64 `json:"units"`
}

// usageDays is how far back the daily usage chart looks.
const usageDays = 30

func (s *Server) quota(ctx context.Context) (QuotaJSON, error) {
	rep, err := s.cfg.Report(ctx)
	if err != nil {
		return QuotaJSON{}, err
	}
	q := QuotaJSON{JSON: rep.JSON(), Daily: []DailyJSON{}, rep: rep}
	start := rep.Now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-usageDays)
	daily, err := s.daily.units(ctx, s.ledger, s.cfg.QuotaKey, start)
	if err != nil {
		return QuotaJSON{}, err
	}
	for _, p := range rep.Pools {
		units := daily[p.Pool]
		if units == nil {
			units = make([]int64, usageDays)
		}
		q.Daily = append(q.Daily, DailyJSON{Pool: p.Pool, Start: start.Format(time.RFC3339), Units: units})
	}
	return q, nil
}

// RunsJSON is a page of runs, newest first.
type RunsJSON struct {
	Runs       []RunJSON `json:"runs"`
	NextCursor *string   `json:"next_cursor"`
}

// RunJSON is one run.
type RunJSON struct {
	ID       int64   `json:"id"`
	Region   string  `json:"region"`
	Category string  `json:"category"` // a trending run's chart: "" the unfiltered one
	Kind     string  `json:"kind"`
	Status   string  `json:"status"`
	Started  *string `json:"started"`
	Finished *string `json:"finished"`
	Pages    int     `json:"pages"`
	Videos   int     `json:"videos"`
	Message  string  `json:"message"`
	RetryAt  *string `json:"retry_at"`
}

func (s *Server) runs(r *http.Request) (RunsJSON, error) {
	region, err := regionParam(r.URL.Query().Get("region"), false)
	if err != nil {
		return RunsJSON{}, err
	}
	kind, err := kindParam(r)
	if err != nil {
		return RunsJSON{}, err
	}
	limit, err := limitParam(r, 50, maxRunsLimit)
	if err != nil {
		return RunsJSON{}, err
	}
	before, err := decodeCursor(r, "runs")
	if err != nil {
		return RunsJSON{}, err
	}
	list, err := s.cfg.DB.ListRuns(r.Context(), store.RunFilter{Region: region, Kind: kind, Before: before, Limit: limit + 1})
	if err != nil {
		return RunsJSON{}, err
	}
	out := RunsJSON{Runs: []RunJSON{}}
	for i, run := range list {
		if i == limit {
			c := encodeCursor("runs", list[i-1].RunID)
			out.NextCursor = &c
			break
		}
		out.Runs = append(out.Runs, RunJSON{ID: run.RunID, Region: run.Region, Category: run.Category, Kind: string(run.Kind), Status: string(run.Status),
			Started: stamp(run.Started), Finished: stamp(run.Finished), Pages: run.Pages, Videos: run.Videos,
			Message: run.Message, RetryAt: stamp(run.RetryAt)})
	}
	return out, nil
}

// chartsCache keeps the list of charts the pickers and the front page
// offer, and reads it again whenever the store's mark of it moved
// (store.ChartsMark): a new chart is offered as soon as its first run
// stores a page, and a list of a year's runs is not read on every request.
type chartsCache struct {
	mu     sync.Mutex
	mark   string
	cached []store.ChartName
}

func (c *chartsCache) list(ctx context.Context, db *store.DB) ([]store.ChartName, error) {
	mark, err := db.ChartsMark(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.cached != nil && c.mark == mark {
		defer c.mu.Unlock()
		return c.cached, nil
	}
	c.mu.Unlock()
	l, err := db.Charts(ctx) // read after the mark: never older than it
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mark, c.cached = mark, l
	return l, nil
}

// dailyCache keeps the units of the days before today: they are most of a
// 30-day chart's reading (a month of ledger) and do not change once the
// day is over, but for a late write, which dailyTTL bounds. Today's units
// are read on every request.
type dailyCache struct {
	mu     sync.Mutex
	key    string
	at     time.Time
	cached map[string][]int64
}

const dailyTTL = 10 * time.Minute

// units returns usageDays of daily units from start, the last one today.
func (c *dailyCache) units(ctx context.Context, db *ledger.Ledger, quotaKey string, start time.Time) (map[string][]int64, error) {
	past, err := c.past(ctx, db, quotaKey, start)
	if err != nil {
		return nil, err
	}
	today, err := db.DailyUnits(ctx, quotaKey, start.AddDate(0, 0, usageDays-1), 1)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for pool, u := range past {
		out[pool] = append(make([]int64, 0, usageDays), u...)
		out[pool] = append(out[pool], 0)
	}
	for pool, u := range today {
		if out[pool] == nil {
			out[pool] = make([]int64, usageDays)
		}
		out[pool][usageDays-1] = u[0]
	}
	return out, nil
}

func (c *dailyCache) past(ctx context.Context, db *ledger.Ledger, quotaKey string, start time.Time) (map[string][]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := quotaKey + "@" + start.Format(time.DateOnly)
	if c.key == key && time.Since(c.at) < dailyTTL {
		return c.cached, nil
	}
	u, err := db.DailyUnits(ctx, quotaKey, start, usageDays-1)
	if err != nil {
		return nil, err
	}
	c.key, c.at, c.cached = key, time.Now(), u
	return u, nil
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
			"so its data was deleted; only its id and that day are kept (docs/terms.md)", id, at.UTC().Format(time.DateOnly))}
	}
	return &notFound{code: "no_video", msg: "no video " + id + " is stored"}
}
