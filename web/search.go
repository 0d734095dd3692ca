package web

// Search: a page of hits as JSON, its read, the API's answer and the page
// with its form.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web/edge"
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

// HitJSON is one video that matched; Snippet marks the matched words
// between [ and ].
type HitJSON struct {
	VideoCard
	Snippet string `json:"snippet"`
	// description is the start of the video's description, which the
	// page shows under a hit whose snippet is its title.
	description string
	Regions     []string `json:"regions"`
	Views       *int64   `json:"views"` // the latest count, null hidden
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
		out = append(out, HitJSON{VideoCard: CardOf(h.Video), Snippet: h.Snippet, Regions: regions, Views: h.ViewCount,
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

// searchQuery reads and checks q.
func searchQuery(r *http.Request) (string, error) {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	switch {
	case q == "":
		return "", badParam("q", "is required: the words to search for")
	case len(q) > maxQueryLen:
		return "", badParam("q", "is longer than %d bytes", maxQueryLen)
	}
	return q, nil
}

// searchErr turns a query with nothing to search for into a 400 on q.
func searchErr(err error) error {
	if errors.Is(err, store.ErrBadQuery) {
		return badParam("q", "has nothing that can be searched for")
	}
	return err
}

func (s *Server) apiSearch(w http.ResponseWriter, r *http.Request) {
	res, err := s.search(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	showSearch(w.Header(), res)
	replyJSON(w, http.StatusOK, res)
}

// searchKey names every search's answer: any landing may change what
// matches.
const searchKey = "search"

// showSearch names what a search's answer shows: a search, and each hit.
func showSearch(h http.Header, res SearchResult) {
	cards := make([]VideoCard, len(res.Hits))
	for i, hit := range res.Hits {
		cards[i] = hit.VideoCard
	}
	showCards(h, []string{searchKey}, cards...)
}

type searchView struct {
	shared
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
		Category: q.Get("category"), Language: q.Get("language"), Sort: q.Get("sort"), Thumbs: !s.cfg.NoThumbnails}
	if c, err := categoryParam(r); err == nil {
		v.Category = c
	}
	if v.Sort == "" {
		v.Sort = "relevance"
	}
	s.searchForm(r, &v)
	v.Share = share{URL: s.canonical("/search"), Type: "website", Title: "Search the trending videos",
		Description: "Search the titles, descriptions, tags and channels of the videos YouTube's trending charts held, in every language.", Feeds: s.feeds()}
	if strings.TrimSpace(v.Query) == "" {
		edge.Show(w.Header(), searchKey) // the form's choices: the charted regions
		s.render(w, r, http.StatusOK, "search", v)
		return
	}
	res, err := s.search(r)
	if err != nil {
		status, _, param, msg := s.classify(r, err)
		v.Error, v.Param = msg, param
		retryLater(w, status)
		s.render(w, r, status, "search", v)
		return
	}
	showSearch(w.Header(), res)
	v.Title, v.Result = "Search: "+res.Query, &res
	// robots.txt keeps crawlers off a search's answers: no canonical
	// address, and none to index.
	v.Share.URL, v.Share.NoIndex = "", true
	v.Share.Title = "Videos matching “" + res.Query + "”"
	v.Share.Description = "The videos matching “" + res.Query + "” among those YouTube's trending charts held."
	if len(res.Hits) > 0 {
		v.Share.Image = s.previewImage(res.Hits[0].Thumbnail, res.Hits[0].Title)
	}
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
