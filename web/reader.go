package web

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// The pages for the people who read the charts: the front page of each
// region's top videos, and what every row of a chart or a search shows.

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

// regionName is a region's name in English: United States.
func regionName(code string) string {
	r, err := language.ParseRegion(code)
	if err != nil {
		return code
	}
	if n := display.English.Regions().Name(r); n != "" {
		return n
	}
	return code
}

// languageName names a language tag in English and, when it differs, in
// the language itself: "Hindi · हिन्दी", "English"; the tag as it is when
// it names no known language.
func languageName(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return tag
	}
	en := display.English.Tags().Name(t)
	if en == "" {
		return tag
	}
	if self := display.Self.Name(t); self != "" && !strings.EqualFold(self, en) {
		return en + " · " + self
	}
	return en
}

// since is how long ago a stamp was, without "ago": "3 days".
func since(at *string, now time.Time) string {
	return strings.TrimSuffix(age(at, now), " ago")
}

// channelURL is a channel's page on YouTube; "" without an id.
func channelURL(id string) string {
	if id == "" {
		return ""
	}
	return "https://www.youtube.com/channel/" + url.PathEscape(id)
}

// short is a count as a reader takes it in: 27.2M, 950K, 812.
func short(n int64) string {
	return compact(float64(n))
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
			return &e.Views
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

// option is one choice of a select: a region, a category, a language or
// an order.
type option struct {
	Code, Name string
	Current    bool
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

// searchCategories are the categories the search form offers: every one
// ingest names.
func searchCategories() []option {
	var out []option
	for id, name := range ingest.CategoryNames {
		out = append(out, option{Code: id, Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// searchLanguages are the languages the search form offers: the common
// ones of the charts, and the one asked for.
var searchLanguages = []string{"en", "es", "pt", "hi", "ja", "ko", "de", "fr", "it", "ru", "id", "ar", "tr", "vi", "th",
	"ta", "te", "bn", "mr", "pl", "nl", "uk", "zh", "zxx"}
