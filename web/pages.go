package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// pages holds one template set per page, each with the shared layout.
type pages struct {
	byName map[string]*template.Template
}

var pageNames = []string{"front", "operator", "chart", "nochart", "video", "search", "login", "error"}

// parsePages parses the pages; signOut shows the sign-out button, operator
// the link to the operator's page (not on a public site, whose readers it
// would only send to a sign-in), names the regions.
func parsePages(signOut, operator bool, asset func(string) string, names places) (*pages, error) {
	funcs := template.FuncMap{"signOut": func() bool { return signOut }, "operator": func() bool { return operator }, "asset": asset, "plural": plural, "deref": func(p *int) int { return *p }, "thumbnail": thumbnail, "addf": func(a, b float64) float64 { return a + b },
		"subf": func(a, b float64) float64 { return a - b }, "midf": func(a, b float64) float64 { return (a + b) / 2 }, "duration": duration, "age": age, "youtube": youTubeURL, "plural64": plural64,
		"num64": func(n int) string { return num(int64(n)) }, "add": func(a, b int) int { return a + b },
		"num": num, "when": when, "spark": sparkline, "marks": marks,
		"stampTime": stampTime, "abs": func(n int) int { return max(n, -n) }, "shortNote": shortNote,
		"dur": report.ShortDuration, "chartLabel": names.chart, "chartPath": chartPath, "regionList": names.list,
		"rowLabel": func(code string) string { return chartLabel(splitChart(code)) },
		"rowPath":  func(code string) string { return chartPath(splitChart(code)) },
		"since":    since, "short": short, "channel": channelURL, "language": languageName, "region": names.name,
		"moved": movementText, "gained": func(p *int64) string {
			if *p < 0 {
				return "−" + short(-*p)
			}
			return "+" + short(*p)
		}, "num64s": func(p *int64) string { return num(*p) }, "hitTitle": hitTitle, "hitSnippet": hitSnippet,
		"wide": wideThumbnail, "jumps": jumps}
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse %s page: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// render executes a page into a buffer first, so a template error is a
// clean 500, never half a page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	set, cc := s.pages, cacheFor(status)
	if s.operatorHeader(r) {
		set, cc = s.signedPages, personal
	} else {
		s.varyCookie(w.Header())
	}
	var buf bytes.Buffer
	if err := set.byName[name].Execute(&buf, data); err != nil {
		s.cfg.Logger.Error("web: render", "page", name, ingest.LogErr, err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", cc)
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// cacheFor is the Cache-Control of an answer: one that may be kept is
// revalidated each time (transport.go); an error is not kept.
func cacheFor(status int) string {
	if status == http.StatusOK {
		return revalidate
	}
	return "no-store"
}

// errorView is a page's error, as a person reads it.
type errorView struct {
	Title   string
	Status  int
	Message string
}

func (s *Server) pageError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", errorView{Title: http.StatusText(status), Status: status, Message: msg})
}

func (s *Server) pageFail(w http.ResponseWriter, r *http.Request, err error) {
	status, _, _, msg := s.classify(r, err)
	s.pageError(w, r, status, msg)
}

type overviewView struct {
	Title   string
	Quota   QuotaJSON
	Pools   []report.Pool
	Hourly  []usageRow
	Daily   []usageRow
	Regions []report.Region
	Pace    *report.Freshness // nil: no schedule
	Now     time.Time
	Reset   time.Time
}

// usageRow is one pool's usage over a span: its bars, or, when it spent
// nothing, one quiet line saying so.
type usageRow struct {
	Pool  string
	Chart *BarChart
	Empty string
}

func usage(pool, span string, units []int64, start time.Time, label func(start time.Time, i int) string) usageRow {
	var total int64
	for _, u := range units {
		total += u
	}
	if total == 0 {
		return usageRow{Pool: pool, Empty: "no " + pool + " calls in " + span}
	}
	c := bars(pool, units, func(i int) string { return label(start, i) })
	return usageRow{Pool: pool, Chart: &c}
}

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) {
	q, err := s.quota(r.Context())
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	v := overviewView{Title: "Operator", Quota: q, Pools: q.rep.Pools, Regions: q.rep.Regions, Pace: q.rep.Freshness, Now: q.rep.Now, Reset: q.rep.UpstreamReset}
	hourly := map[string]report.HourlyJSON{}
	for _, h := range q.Hourly {
		hourly[h.Pool] = h
	}
	daily := map[string]DailyJSON{}
	for _, d := range q.Daily {
		daily[d.Pool] = d
	}
	// Every pool, in the pools' order, the same way in both spans.
	for _, p := range q.rep.Pools {
		h := hourly[p.Pool]
		start, _ := time.Parse(time.RFC3339, h.Start)
		v.Hourly = append(v.Hourly, usage(p.Pool, "24 hours", h.Units, start, func(start time.Time, i int) string {
			return start.Add(time.Duration(i) * time.Hour).Format("Jan 2 15:00")
		}))
		d := daily[p.Pool]
		start, _ = time.Parse(time.RFC3339, d.Start)
		v.Daily = append(v.Daily, usage(p.Pool, "30 days", d.Units, start, func(start time.Time, i int) string {
			return start.AddDate(0, 0, i).Format("Jan 2")
		}))
	}
	s.render(w, r, http.StatusOK, "operator", v)
}

type chartView struct {
	Title      string
	Chart      ChartJSON
	At         string // the picker's value: the run's time, to the minute, UTC
	Thumbs     bool
	Regions    []area       // the regions with a chart, by area
	Categories []option     // the region's charts: all, and each category
	Languages  []switchLink // all, then the run's languages
	Prev, Next string       // the chart's run before and after this one
	Latest     string       // "" when this is the latest
	Now        time.Time
	Sort       string            // the rows' order (chartSorts)
	SortHref   map[string]string // each order the page offers, by key
}

// switchLink is one choice of a switcher.
type switchLink struct {
	Label, Href string
	Title       string // what the choice holds, when that needs saying
	Count       int    // how many videos it holds, 0 not said
	Current     bool
}

func (s *Server) chartPage(w http.ResponseWriter, r *http.Request) {
	order, err := s.sortParam(r)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	c, err := s.chart(r)
	var nf *notFound
	if errors.As(err, &nf) && nf.code == "no_chart" {
		s.noChartPage(w, r, nf)
		return
	}
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	sortEntries(c.Entries, order)
	v := chartView{Title: s.places.chart(c.Region, c.Category) + " chart", Chart: c, Thumbs: !s.cfg.NoThumbnails,
		At: c.at.UTC().Format(LocalMinute), Now: s.cfg.Now(), Sort: order}
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
	langs, err := s.cfg.DB.ChartLanguages(r.Context(), c.Region, c.RunID)
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	v.Languages = languageTabs(c, langs)
	s.render(w, r, http.StatusOK, "chart", v)
}

// languageTabs offers the chart in every language and in each of its
// run's, at the same run: the latest stays the latest, an earlier run is
// kept by its time. A filter the run has no videos of (fr, or a narrower
// hi-in) is a tab of its own, so the page says what it shows.
func languageTabs(c ChartJSON, langs []store.ChartLanguage) []switchLink {
	var at time.Time
	if c.NextRunID != nil {
		at = c.at
	}
	tabs := []switchLink{{Label: "All", Href: chartHref(c.Region, c.Category, "", at), Current: c.Language == ""}}
	found := c.Language == ""
	for _, l := range langs {
		found = found || l.Language == c.Language
		tabs = append(tabs, switchLink{Label: languageName(l.Language), Count: l.Videos, Href: chartHref(c.Region, c.Category, l.Language, at),
			Current: l.Language == c.Language, Title: fmt.Sprintf("%d %s in %s by audio (else text) language", l.Videos, plural(l.Videos, "video", "videos"), l.Language)})
	}
	if !found {
		tabs = append(tabs, switchLink{Label: languageName(c.Language), Href: chartHref(c.Region, c.Category, c.Language, at), Current: true})
	}
	return tabs
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

// thumbnail is the URL of a thumbnail the policy lets the page load:
// one on ThumbnailHost, over https; "" for any other.
func thumbnail(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host != ThumbnailHost || u.User != nil {
		return ""
	}
	return u.String()
}

// splitChart reads a report row's chart name: US, or US/10 for a category.
func splitChart(code string) (region, category string) {
	region, category, _ = strings.Cut(code, "/")
	return region, category
}

type videoView struct {
	Title   string
	Video   VideoJSON
	Ranks   LineChart
	Views   LineChart
	Now     time.Time
	YouTube string
	Derived bool // the computed figures are shown, labelled (Config.Derived)
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
	ranks, views := videoSeries(v, s.places)
	s.render(w, r, http.StatusOK, "video", videoView{Title: v.Title, Video: v, Now: s.cfg.Now(), YouTube: youTubeURL(v.ID), Derived: s.cfg.Derived,
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
		charts.t, charts.v = append(charts.t, p.at), append(charts.v, float64(p.Views))
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

type searchView struct {
	Title      string
	Query      string
	Region     string
	Category   string
	Language   string
	Sort       string
	Result     *SearchResult
	Error      string
	Param      string
	Thumbs     bool
	Now        time.Time
	RegionName string // the region asked for, by name
	Regions    []area // the regions with a chart, by area
	Categories []option
	Languages  []option
	Sorts      []option
	Prev, Next string // the hits before and after these
}

func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := searchView{Title: "Search", Query: q.Get("q"), Region: strings.ToUpper(strings.TrimSpace(q.Get("region"))),
		Category: q.Get("category"), Language: q.Get("language"), Sort: q.Get("sort"), Thumbs: !s.cfg.NoThumbnails, Now: s.cfg.Now()}
	if c, err := categoryParam(r); err == nil {
		v.Category = c
	}
	if v.Sort == "" {
		v.Sort = "relevance"
	}
	s.searchForm(r, &v)
	if strings.TrimSpace(v.Query) == "" {
		s.render(w, r, http.StatusOK, "search", v)
		return
	}
	res, err := s.search(r)
	if err != nil {
		status, _, param, msg := s.classify(r, err)
		v.Error, v.Param = msg, param
		s.render(w, r, status, "search", v)
		return
	}
	v.Title, v.Result = "Search: "+res.Query, &res
	limit, _ := limitParam(r, 20, maxSearchLimit) // read by search already
	if res.Offset > 0 {
		v.Prev = searchHref(r, max(0, res.Offset-limit))
	}
	if res.NextCursor != nil {
		v.Next = searchHref(r, res.Offset+len(res.Hits))
	}
	s.render(w, r, http.StatusOK, "search", v)
}

// searchForm fills the choices of the search form: the regions with a
// chart, every category, the common languages and the orders.
func (s *Server) searchForm(r *http.Request, v *searchView) {
	if v.Region != "" {
		v.RegionName = s.places.name(v.Region)
	}
	if charts, err := s.charts.list(r.Context(), s.cfg.DB); err == nil {
		v.Regions = s.places.pickerAreas(charts, v.Region)
	}
	v.Categories = []option{{Code: "", Name: "any category", Current: v.Category == ""}}
	for _, c := range searchCategories() {
		c.Current = c.Code == v.Category
		v.Categories = append(v.Categories, c)
	}
	v.Languages = []option{{Code: "", Name: "any language", Current: v.Language == ""}}
	found := v.Language == ""
	for _, l := range searchLanguages {
		cur := strings.EqualFold(l, v.Language)
		found = found || cur
		v.Languages = append(v.Languages, option{Code: l, Name: languageName(l), Current: cur})
	}
	if !found {
		v.Languages = append(v.Languages, option{Code: v.Language, Name: languageName(v.Language), Current: true})
	}
	for _, o := range []string{"relevance", "views", "newest"} {
		v.Sorts = append(v.Sorts, option{Code: o, Name: o, Current: o == v.Sort})
	}
}

// searchHref is the search asked for, from hit number offset+1.
func searchHref(r *http.Request, offset int) string {
	q := url.Values{}
	for k, vs := range r.URL.Query() {
		if k != "cursor" && len(vs) > 0 && vs[0] != "" {
			q.Set(k, vs[0])
		}
	}
	if offset > 0 {
		q.Set("cursor", encodeCursor("search", int64(offset)))
	}
	return "/search?" + q.Encode()
}

// hitTitle is a hit's title, its matches marked when the snippet is
// cut from it; hitSnippet what the hit adds to its title: the snippet
// when it matched elsewhere, else the start of the description.
func hitTitle(h HitJSON) []Seg {
	if plainOf(h.Snippet) == h.Title {
		return marks(h.Snippet)
	}
	return []Seg{{Text: h.Title}}
}

func hitSnippet(h HitJSON) []Seg {
	if plainOf(h.Snippet) != h.Title {
		return marks(h.Snippet)
	}
	d := strings.Join(strings.Fields(h.description), " ")
	if r := []rune(d); len(r) > 160 {
		cut := strings.TrimRightFunc(string(r[:159]), func(c rune) bool { return c != ' ' }) // at a word's end
		if cut == "" {
			cut = string(r[:159])
		}
		d = strings.TrimSpace(cut) + "…"
	}
	return []Seg{{Text: d}}
}

// plainOf is a snippet without its marks.
func plainOf(snippet string) string {
	var b strings.Builder
	for _, s := range marks(snippet) {
		b.WriteString(s.Text)
	}
	return b.String()
}

// Seg is a piece of a snippet; Hit pieces matched the query.
type Seg struct {
	Text string
	Hit  bool
}

// marks splits a snippet at the store's [ and ] marks, so the template
// can wrap the matches in <mark> while escaping every piece.
func marks(snippet string) []Seg {
	var out []Seg
	for snippet != "" {
		open := strings.IndexByte(snippet, '[')
		end := -1
		if open >= 0 {
			end = strings.IndexByte(snippet[open:], ']')
		}
		if open < 0 || end < 0 {
			return append(out, Seg{Text: snippet})
		}
		if open > 0 {
			out = append(out, Seg{Text: snippet[:open]})
		}
		out = append(out, Seg{Text: snippet[open+1 : open+end], Hit: true})
		snippet = snippet[open+end+1:]
	}
	return out
}

func when(s *string) string {
	if s == nil {
		return "-"
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return *s
	}
	return t.UTC().Format("Jan 2 15:04 UTC")
}

func stampTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("Jan 2 15:04 UTC")
}

// shortNote keeps a run's message short for a table cell.
func shortNote(msg string) string {
	if r := []rune(msg); len(r) > 90 {
		return string(r[:89]) + "…"
	}
	return msg
}

// plural picks the word for n things: 1 hit, 2 hits, 0 hits.
func plural(n int, one, many string) string {
	return plural64(int64(n), one, many)
}

func plural64(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)

// duration prints an ISO 8601 duration as the upstream sends it (PT22M47S)
// the way a player shows it (22:47, 1:02:03); "live" for P0D, what a live
// broadcast has; anything else as it came.
func duration(iso string) string {
	m := isoDuration.FindStringSubmatch(iso)
	if m == nil || iso == "P" || strings.HasSuffix(iso, "T") {
		return iso
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
	secs := (((n(1)*7+n(2))*24+n(3))*60+n(4))*60 + n(5)
	if secs == 0 {
		return "live"
	}
	h, mnt, sec := secs/3600, secs/60%60, secs%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, mnt, sec)
	}
	return fmt.Sprintf("%d:%02d", mnt, sec)
}

// age says how long before now a stamp was: "3 days ago".
func age(at *string, now time.Time) string {
	if at == nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339, *at)
	if err != nil {
		return ""
	}
	d := now.Sub(t)
	unit := func(n int, word string) string { return fmt.Sprintf("%d %s ago", n, plural(n, word, word+"s")) }
	switch {
	case d < 0:
		return "in the future"
	case d < time.Hour:
		return unit(max(1, int(d/time.Minute)), "minute")
	case d < 48*time.Hour:
		return unit(int(d/time.Hour), "hour")
	case d < 60*24*time.Hour:
		return unit(int(d/(24*time.Hour)), "day")
	case d < 730*24*time.Hour:
		return unit(int(d/(30*24*time.Hour)), "month")
	}
	return unit(int(d/(365*24*time.Hour)), "year")
}
