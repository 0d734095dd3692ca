package web

// A region's chart (or one category's) at one run: its JSON, its read from
// the store, the API's answer and the page; the ways from one chart to
// another (its runs, categories, languages and orders, the picker's form,
// and the list of charts they offer); and a chart with no run to show.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
)

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
	// the --derived setting (docs/explanation/terms.md, III.E.4.h). Without it they are
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
	Views     *int64  `json:"views"` // at this entry, null hidden
	ViewTrend []int64 `json:"views_trend"`
	// DayMovement is places climbed since the chart a day before; nil
	// when the video was not in it (or there is no such chart).
	DayMovement *int `json:"day_movement"`
	// Gained is the views gained since the chart's previous run, Gained24
	// since its run a day before; nil when the video was not in it.
	Gained   *int64 `json:"views_gained"`
	Gained24 *int64 `json:"views_gained_24h"`
	// PeakRank is the best rank in this chart up to this run; Days the
	// UTC days the video was in it, the export's trending_day_utc, so that
	// a warehouse counts the same figure from the export's own rows.
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
	q, err := chartQuery(r)
	if err != nil {
		return ChartJSON{}, err
	}
	return s.readChart(r.Context(), q)
}

// chartQuery is the chart a request asks for: its region, category, run,
// length and language.
func chartQuery(r *http.Request) (store.ChartQuery, error) {
	region, err := regionParam(r.PathValue("region"), true)
	if err != nil {
		return store.ChartQuery{}, err
	}
	category, err := categoryParam(r)
	if err != nil {
		return store.ChartQuery{}, err
	}
	at, err := timeParam(r, "at")
	if err != nil {
		return store.ChartQuery{}, err
	}
	limit, err := limitParam(r, maxChartLimit, maxChartLimit)
	if err != nil {
		return store.ChartQuery{}, err
	}
	language, err := languageParam(r)
	if err != nil {
		return store.ChartQuery{}, err
	}
	return store.ChartQuery{Region: region, Category: category, Language: language, At: at, Limit: limit}, nil
}

// readChart reads q's chart, with the history the computed figures need
// when they are shown.
func (s *Server) readChart(ctx context.Context, q store.ChartQuery) (ChartJSON, error) {
	q.Depth = store.ChartFull
	if !s.cfg.Derived { // the history is read for the computed figures alone
		q.Depth = store.ChartPlain
	}
	c, err := s.cfg.DB.Chart(ctx, q)
	if errors.Is(err, store.ErrNoChart) {
		return ChartJSON{}, s.noChart(ctx, q.Region, q.Category, q.At)
	}
	if err != nil {
		return ChartJSON{}, err
	}
	return s.chartOf(c), nil
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
			if e.Views != nil && e.PrevViews != 0 {
				g := *e.Views - e.PrevViews
				ej.Gained = &g
			}
		}
		if e.DayRank != 0 {
			m := e.DayRank - e.Rank
			ej.DayMovement = &m
			if e.Views != nil && e.DayViews != 0 {
				g := *e.Views - e.DayViews
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

// chartOf is ChartOf under this server's standing and thumbnails.
func (s *Server) chartOf(c store.Chart) ChartJSON {
	j := ChartOf(c, s.cfg.Derived)
	if s.cfg.NoThumbnails {
		for i := range j.Entries {
			j.Entries[i].Thumbnail = ""
		}
	}
	return j
}

func (s *Server) apiChart(w http.ResponseWriter, r *http.Request) {
	c, err := s.chart(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	showChart(w.Header(), c)
	replyJSON(w, http.StatusOK, c)
}

type chartView struct {
	shared
	Title      string
	Chart      ChartJSON
	At         string // the picker's value: the run's time, to the minute, UTC
	Thumbs     bool
	Regions    []area            // the regions with a chart, by area
	Categories []option          // the region's charts: all, and each category
	Languages  []switchLink      // all, then the run's languages
	Prev, Next string            // the chart's run before and after this one
	Latest     string            // "" when this is the latest
	Sort       string            // the rows' order (chartSorts)
	SortHref   map[string]string // each order the page offers, by key
}

func (s *Server) chartPage(w http.ResponseWriter, r *http.Request) {
	order, err := s.sortParam(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	q, err := chartQuery(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	// The page's languages are found from the owners' tags and the
	// titles' scripts (lang.go), over the whole run: the store's filter
	// knows only the tags, which most titles lack.
	language := q.Language
	q.Language = ""
	c, err := s.readChart(r.Context(), q)
	var nf *notFound
	if errors.As(err, &nf) && nf.code == "no_chart" {
		s.noChartPage(w, r, nf)
		return
	}
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	tabs := languageTabs(c, language)
	c.Language, c.Entries = language, inLanguage(c.Entries, c.Region, language)
	sortEntries(c.Entries, order)
	v := chartView{Title: s.places.chart(c.Region, c.Category) + " chart", Chart: c, Thumbs: !s.cfg.NoThumbnails,
		At: c.at.UTC().Format(LocalMinute), Sort: order}
	v.SortHref = map[string]string{}
	for _, o := range chartSorts {
		if !o.Computed || s.cfg.Derived {
			v.SortHref[o.Key] = sortHref(c, o.Key)
		}
	}
	if c.Language != "" {
		v.Title += " · " + languageName(c.Language)
	}
	if c.PrevRunID != nil {
		v.Prev = chartHref(c.Region, c.Category, c.Language, c.prevAt)
	}
	if c.NextRunID != nil {
		v.Next, v.Latest = chartHref(c.Region, c.Category, c.Language, c.nextAt), chartHref(c.Region, c.Category, c.Language, time.Time{})
	}
	charts, err := s.charts.list(r.Context(), s.cfg.DB)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	v.Regions, v.Categories = s.places.pickerAreas(charts, c.Region), pickerCategories(charts, c.Region, c.Category)
	v.Languages = tabs
	v.Share = s.chartShare(c, v.Title)
	showChart(w.Header(), c)
	s.render(w, r, http.StatusOK, "chart", v)
}

// showChart names what an answer of c shows: its chart and each video.
func showChart(h http.Header, c ChartJSON) {
	cards := make([]VideoCard, len(c.Entries))
	for i, e := range c.Entries {
		cards[i] = e.VideoCard
	}
	showCards(h, []string{edge.Chart(c.Region, c.Category)}, cards...)
}

// chartSorts are the orders a chart's page offers; the computed ones only
// under the standing that shows computed figures.
var chartSorts = []struct {
	Key, Label string
	Computed   bool
}{
	{"rank", "rank", false},
	{"views", "views", false},
	{"gained", "views gained since the previous run", true},
	{"gained24", "views gained in 24 hours", true},
}

// sortParam reads a chart page's ?sort=.
func (s *Server) sortParam(r *http.Request) (string, error) {
	v := r.URL.Query().Get("sort")
	if v == "" {
		return "rank", nil
	}
	var keys []string
	for _, o := range chartSorts {
		if !o.Computed || s.cfg.Derived {
			keys = append(keys, o.Key)
			if o.Key == v {
				return v, nil
			}
		}
	}
	return "", badParam("sort", "must be one of %s, got %q", strings.Join(keys, ", "), v)
}

// sortEntries orders a chart's rows by key, best first; rows with no
// figure to sort by keep their rank order after the others.
func sortEntries(es []EntryJSON, key string) {
	val := func(e EntryJSON) *int64 {
		switch key {
		case "views":
			return e.Views
		case "gained":
			return e.Gained
		case "gained24":
			return e.Gained24
		}
		return nil
	}
	if key == "rank" {
		return
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := val(es[i]), val(es[j])
		switch {
		case a == nil || b == nil:
			return a != nil && b == nil
		}
		return *a > *b
	})
}

// movementText is an entry's movement as its title says it.
func movementText(n int, since string) string {
	switch {
	case n > 0:
		return fmt.Sprintf("up %d since %s", n, since)
	case n < 0:
		return fmt.Sprintf("down %d since %s", -n, since)
	}
	return "same place as " + since
}

// switchLink is one choice of a switcher.
type switchLink struct {
	Label, Href string
	Title       string // what the choice holds, when that needs saying
	Count       int    // how many videos it holds, 0 not said
	Current     bool
}

// languageTabs offers the chart c (every language's) in every language
// and in each of its videos' (videoLang), most videos first, at the same run: the
// latest stays the latest, an earlier run is kept by its time. A filter
// the run has no videos of (fr) is a tab of its own, so the page says
// what it shows.
func languageTabs(c ChartJSON, current string) []switchLink {
	var at time.Time
	if c.NextRunID != nil {
		at = c.at
	}
	cur := langKey(current)
	tabs := []switchLink{{Label: "All", Href: chartHref(c.Region, c.Category, "", at), Current: current == ""}}
	found := current == ""
	for _, l := range titleLanguages(c.Entries, c.Region) {
		found = found || l.key == cur
		tabs = append(tabs, switchLink{Label: languageName(l.key), Count: l.videos, Href: chartHref(c.Region, c.Category, l.key, at),
			Current: l.key == cur, Title: fmt.Sprintf("%d %s in %s by audio (else text) language, or the title's script", l.videos, plural(l.videos, "video", "videos"), l.key)})
	}
	if !found {
		tabs = append(tabs, switchLink{Label: languageName(current), Href: chartHref(c.Region, c.Category, current, at), Current: true})
	}
	return tabs
}

// titleLanguage is a language a chart's videos are in, and how many.
type titleLanguage struct {
	key    string
	videos int
}

// titleLanguages are the languages of entries on region's chart (langKey
// of videoLang), most videos first, then by tag.
func titleLanguages(entries []EntryJSON, region string) []titleLanguage {
	count := map[string]int{}
	for _, e := range entries {
		if k := langKey(videoLang(e.VideoCard, region)); k != "" {
			count[k]++
		}
	}
	out := make([]titleLanguage, 0, len(count))
	for k, n := range count {
		out = append(out, titleLanguage{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].videos != out[j].videos {
			return out[i].videos > out[j].videos
		}
		return out[i].key < out[j].key
	})
	return out
}

// inLanguage are the entries in language (videoLang) on region's
// chart ("": all of them); a language without a script (zh) holds each of
// its scripts.
func inLanguage(entries []EntryJSON, region, language string) []EntryJSON {
	want := langKey(language)
	if language == "" {
		return entries
	}
	out := []EntryJSON{}
	for _, e := range entries {
		if k := langKey(videoLang(e.VideoCard, region)); k == want || strings.HasPrefix(k, want+"-") {
			out = append(out, e)
		}
	}
	return out
}

// chartHref is a chart's page in language ("" every one) at the run that
// started at at (zero: the latest).
func chartHref(region, category, language string, at time.Time) string {
	q := url.Values{}
	if !at.IsZero() {
		q.Set("at", at.UTC().Format(time.RFC3339Nano))
	}
	if category != "" {
		q.Set("category", category)
	}
	if language != "" {
		q.Set("language", language)
	}
	if len(q) == 0 {
		return "/charts/" + region
	}
	return "/charts/" + region + "?" + q.Encode()
}

// sortHref is the chart page in the order key, at the same run.
func sortHref(c ChartJSON, key string) string {
	var at time.Time
	if c.NextRunID != nil {
		at = c.at
	}
	h := chartHref(c.Region, c.Category, c.Language, at)
	if key == "rank" {
		return h
	}
	if strings.Contains(h, "?") {
		return h + "&sort=" + key
	}
	return h + "?sort=" + key
}

// splitChart reads a report row's chart name: US, or US/10 for a category.
func splitChart(code string) (region, category string) {
	region, category, _ = strings.Cut(code, "/")
	return region, category
}

// pickerCategories are the charts of region: "all" (the unfiltered one)
// and each category, by name.
func pickerCategories(charts []store.ChartName, region, current string) []option {
	var out []option
	for _, c := range charts {
		if c.Region != region {
			continue
		}
		o := option{Code: c.Category, Name: ingest.CategoryName(c.Category), Current: c.Category == current}
		if c.Category == "" {
			o.Code, o.Name = "all", "all"
		}
		out = append(out, o)
	}
	return out
}

// chartsRedirect is where the chart picker's form lands (GET /charts?
// region=US&category=10): the chart's own page, or the region's
// unfiltered chart when it has no chart of that category; without a
// region, the front page, which lists the charts.
func (s *Server) chartsRedirect(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("region") == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	region, err := regionParam(r.URL.Query().Get("region"), true)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	category, err := categoryParam(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	if category != "" {
		charts, err := s.charts.list(r.Context(), s.cfg.DB)
		if err != nil {
			s.pageFail(w, r, err)
			return
		}
		found := false
		for _, c := range charts {
			found = found || c == store.ChartName{Region: region, Category: category}
		}
		if !found {
			category = ""
		}
	}
	to := chartPath(region, category)
	if l := r.URL.Query().Get("language"); l != "" {
		to = chartHref(region, category, l, time.Time{})
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
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

type noChartView struct {
	Title, Label, Message string
	Next                  time.Time // when the chart's first run is due; zero when not known
	Planned               bool      // the charts this ingest fetches include it
	Others                []switchLink
	// Earliest, for a time asked before the chart's first run, is that
	// run's page; At the time asked.
	Earliest, At string
}

// noChartPage is a chart with no stored run yet (or none by the time
// asked): a 404 that says so, when its first run is due when the
// schedule knows, and the charts there are.
func (s *Server) noChartPage(w http.ResponseWriter, r *http.Request, nf *notFound) {
	region, _ := regionParam(r.PathValue("region"), true)
	category, _ := categoryParam(r)
	// The API's message names the chart by its codes; a reader gets names.
	msg := strings.Replace(nf.msg, chartLabel(region, category), s.places.chart(region, category), 1)
	v := noChartView{Title: "No chart yet", Label: s.places.chart(region, category), Message: strings.ToUpper(msg[:1]) + msg[1:]}
	if !nf.earliest.IsZero() {
		at, _ := timeParam(r, "at") // read once already
		v.Title, v.At = "No chart then", at.UTC().Format("2006-01-02 15:04 UTC")
		v.Earliest = chartHref(region, category, r.URL.Query().Get("language"), nf.earliest)
		s.render(w, r, http.StatusNotFound, "nochart", v)
		return
	}
	if s.cfg.Report != nil {
		if rep, err := s.cfg.Report(r.Context()); err == nil {
			code := region
			if category != "" {
				code += "/" + category
			}
			for _, reg := range rep.Regions {
				if reg.Code == code {
					v.Planned, v.Next = true, reg.NextRun
				}
			}
		}
	}
	if charts, err := s.charts.list(r.Context(), s.cfg.DB); err == nil {
		for _, c := range charts {
			v.Others = append(v.Others, switchLink{Label: s.places.chart(c.Region, c.Category), Href: chartPath(c.Region, c.Category)})
		}
	}
	s.render(w, r, http.StatusNotFound, "nochart", v)
}
