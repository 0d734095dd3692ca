package fakeyt

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/regions"
)

// The response shapes of the real API. Counts are strings; likeCount and
// commentCount are left out when the owner hides them.

type listResponse struct {
	Kind          string   `json:"kind"`
	Etag          string   `json:"etag"`
	NextPageToken string   `json:"nextPageToken,omitempty"`
	PrevPageToken string   `json:"prevPageToken,omitempty"`
	RegionCode    string   `json:"regionCode,omitempty"`
	PageInfo      pageInfo `json:"pageInfo"`
	Items         []any    `json:"items"`
}

type pageInfo struct {
	TotalResults   int `json:"totalResults"`
	ResultsPerPage int `json:"resultsPerPage"`
}

// head is what every item of a videos' answer starts with.
type head struct {
	Kind string `json:"kind"`
	Etag string `json:"etag"`
	ID   string `json:"id"`
}

type videoItem struct {
	head
	Snippet        *videoSnippet   `json:"snippet,omitempty"`
	ContentDetails *contentDetails `json:"contentDetails,omitempty"`
	Statistics     *statistics     `json:"statistics,omitempty"`
}

// snippet is what a video's snippet and a search result's share.
type snippet struct {
	PublishedAt  string     `json:"publishedAt"`
	ChannelID    string     `json:"channelId"`
	Title        string     `json:"title"`
	Description  string     `json:"description"`
	Thumbnails   thumbnails `json:"thumbnails"`
	ChannelTitle string     `json:"channelTitle"`
}

func snippetOf(v *video, description string) snippet {
	return snippet{PublishedAt: v.PublishedAt.Format(time.RFC3339), ChannelID: v.ChannelID, Title: v.Title,
		Description: description, Thumbnails: thumbs(v.ID), ChannelTitle: v.ChannelTitle}
}

type videoSnippet struct {
	snippet
	Tags                 []string  `json:"tags,omitempty"`
	CategoryID           string    `json:"categoryId"`
	LiveBroadcastContent string    `json:"liveBroadcastContent"`
	DefaultLanguage      string    `json:"defaultLanguage,omitempty"`
	DefaultAudioLanguage string    `json:"defaultAudioLanguage,omitempty"`
	Localized            localized `json:"localized"`
}

type localized struct {
	Title       string `json:"title"`
	Description string `json:"description"`
}

type thumbnail struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

type thumbnails struct {
	Default thumbnail `json:"default"`
	Medium  thumbnail `json:"medium"`
	High    thumbnail `json:"high"`
}

type contentDetails struct {
	Duration          string             `json:"duration"`
	Dimension         string             `json:"dimension"`
	Definition        string             `json:"definition"`
	Caption           string             `json:"caption"`
	LicensedContent   bool               `json:"licensedContent"`
	ContentRating     map[string]any     `json:"contentRating"`
	Projection        string             `json:"projection"`
	RegionRestriction *regionRestriction `json:"regionRestriction,omitempty"`
}

type regionRestriction struct {
	Blocked []string `json:"blocked,omitempty"`
}

type statistics struct {
	ViewCount     string `json:"viewCount"`
	LikeCount     string `json:"likeCount,omitempty"`
	FavoriteCount string `json:"favoriteCount"`
	CommentCount  string `json:"commentCount,omitempty"`
}

type categoryItem struct {
	Kind    string          `json:"kind"`
	Etag    string          `json:"etag"`
	ID      string          `json:"id"`
	Snippet categorySnippet `json:"snippet"`
}

type categorySnippet struct {
	Title      string `json:"title"`
	Assignable bool   `json:"assignable"`
	ChannelID  string `json:"channelId"`
}

type searchItem struct {
	Kind    string         `json:"kind"`
	Etag    string         `json:"etag"`
	ID      searchID       `json:"id"`
	Snippet *searchSnippet `json:"snippet,omitempty"`
}

type searchID struct {
	Kind    string `json:"kind"`
	VideoID string `json:"videoId"`
}

type searchSnippet struct {
	snippet
	LiveBroadcastContent string `json:"liveBroadcastContent"`
	PublishTime          string `json:"publishTime"`
}

// categories are the ids and names videoCategories.list gives every region.
var categories = []struct {
	id, title  string
	assignable bool
}{
	{"1", "Film & Animation", true}, {"2", "Autos & Vehicles", true}, {"10", "Music", true},
	{"15", "Pets & Animals", true}, {"17", "Sports", true}, {"19", "Travel & Events", true},
	{"20", "Gaming", true}, {"22", "People & Blogs", true}, {"23", "Comedy", true},
	{"24", "Entertainment", true}, {"25", "News & Politics", true}, {"26", "Howto & Style", true},
	{"27", "Education", true}, {"28", "Science & Technology", true}, {"30", "Movies", false},
	{"44", "Trailers", false},
}

func etag(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(h[:20])
}

// parts returns the requested parts, repeated or comma-joined.
func parts(q url.Values, allowed ...string) (map[string]bool, *apiError) {
	out := map[string]bool{}
	for _, v := range q["part"] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if !slices.Contains(allowed, p) {
				return nil, errParam("unknownPart", "part", fmt.Sprintf("'%s'", p))
			}
			out[p] = true
		}
	}
	if len(out) == 0 {
		e := errParam("required", "part", "No filter selected. Expected one of: part")
		e.Error.Message, e.Error.Errors[0].Message = "Required parameter: part", "Required parameter: part"
		return nil, e
	}
	return out, nil
}

func maxResults(q url.Values, def int) (int, *apiError) {
	s := q.Get("maxResults")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 50 {
		return 0, errParam("invalidParameter", "maxResults",
			fmt.Sprintf("Invalid value '%s'. Values must be within the range: [0, 50]", s))
	}
	return n, nil
}

// handlers answer each operation of ingest.Operations: the successful
// body, or the error the query earns.
var handlers = map[string]func(*Fake, url.Values) (any, *apiError){
	ingest.OpVideosList:     (*Fake).videos,
	ingest.OpCategoriesList: (*Fake).categories,
	ingest.OpRegionsList:    (*Fake).i18nRegions,
	ingest.OpSearchList:     (*Fake).searchList,
	ingest.OpBatchGetStats:  (*Fake).batchGetStats,
}

func (f *Fake) categories(q url.Values) (any, *apiError) {
	if _, e := parts(q, "snippet", "id"); e != nil {
		return nil, e
	}
	region := strings.ToUpper(q.Get("regionCode"))
	if region == "" && q.Get("id") == "" {
		return nil, errParam("missingRequiredParameter", "",
			"No filter selected. Expected one of: regionCode, id")
	}
	lang, titles := categoryLanguage(q.Get("hl"))
	resp := &listResponse{Kind: "youtube#videoCategoryListResponse", Etag: etag("cat", region, lang), Items: []any{}}
	for i, c := range categories {
		title := c.title
		if titles != nil {
			title = titles[i]
		}
		resp.Items = append(resp.Items, categoryItem{Kind: "youtube#videoCategory", Etag: etag("cat", region, lang, c.id), ID: c.id,
			Snippet: categorySnippet{Title: title, Assignable: c.assignable, ChannelID: "UCBR8-60-B28hp2BmDPdntcQ"}})
	}
	return resp, nil
}

// categoryLanguage is the language of hl the titles are given in, with
// them in categories' order, as the upstream's hl works: a language it
// knows, by its primary subtag (de, de_DE and de-AT alike), or English
// (en_US, the default, and nil titles: categories' own) for any other.
func categoryLanguage(hl string) (string, []string) {
	primary, _, _ := strings.Cut(strings.ReplaceAll(strings.ToLower(hl), "_", "-"), "-")
	if titles, ok := categoryTitles[primary]; ok {
		return primary, titles
	}
	return "en", nil
}

// categoryTitles are categories' titles in the languages the fake knows
// besides English, in categories' order.
var categoryTitles = map[string][]string{
	"de": {"Filme & Animationen", "Autos & Fahrzeuge", "Musik", "Haustiere & Tiere", "Sport", "Reisen & Events",
		"Gaming", "Menschen & Blogs", "Comedy", "Unterhaltung", "Nachrichten & Politik", "Praktische Tipps & Styling",
		"Bildung", "Wissenschaft & Technik", "Filme", "Trailer"},
	"fr": {"Films et animations", "Auto/Moto", "Musique", "Animaux", "Sport", "Voyages et événements",
		"Jeux vidéo", "People et blogs", "Humour", "Divertissement", "Actualités et politique", "Vie pratique et style",
		"Éducation", "Science et technologie", "Films", "Bandes-annonces"},
	"ja": {"映画とアニメ", "自動車と乗り物", "音楽", "ペットと動物", "スポーツ", "旅行とイベント",
		"ゲーム", "ブログ", "コメディー", "エンターテイメント", "ニュースと政治", "ハウツーとスタイル",
		"教育", "科学と技術", "映画", "予告編"},
	"pt": {"Filmes e desenhos", "Autos e veículos", "Música", "Animais de estimação", "Esportes", "Viagens e eventos",
		"Jogos", "Pessoas e blogs", "Comédia", "Entretenimento", "Notícias e política", "Guias e estilo",
		"Educação", "Ciência e tecnologia", "Filmes", "Trailers"},
}

// regionList is the body of i18nRegions.list: no pageInfo, unlike the
// other lists.
type regionList struct {
	Kind  string       `json:"kind"`
	Etag  string       `json:"etag"`
	Items []regionItem `json:"items"`
}

type regionItem struct {
	Kind    string        `json:"kind"`
	Etag    string        `json:"etag"`
	ID      string        `json:"id"`
	Snippet regionSnippet `json:"snippet"`
}

type regionSnippet struct {
	GL   string `json:"gl"`
	Name string `json:"name"`
}

// i18nRegions names every region of the catalogue (regions.Builtin), each
// of which has a chart here, then those ListRegion adds. The names are English whatever hl asks for.
func (f *Fake) i18nRegions(q url.Values) (any, *apiError) {
	if _, e := parts(q, "snippet"); e != nil {
		return nil, e
	}
	resp := &regionList{Kind: "youtube#i18nRegionListResponse", Etag: etag("regions"), Items: []regionItem{}}
	f.mu.Lock()
	listed := append(slices.Clone(regions.Builtin), f.listed...)
	f.mu.Unlock()
	for _, r := range listed {
		resp.Items = append(resp.Items, regionItem{Kind: "youtube#i18nRegion", Etag: etag("region", r.Code), ID: r.Code,
			Snippet: regionSnippet{GL: r.Code, Name: r.Name}})
	}
	return resp, nil
}

func (f *Fake) videos(q url.Values) (any, *apiError) {
	want, e := parts(q, "snippet", "statistics", "contentDetails", "id", "status", "player", "topicDetails", "localizations")
	if e != nil {
		return nil, e
	}
	ids, chart := q.Get("id"), q.Get("chart")
	switch {
	case ids != "" && chart != "":
		return nil, errParam("incompatibleParameters", "", "The request specifies incompatible filters: id and chart.")
	case ids != "":
		return f.videosByID(q, want)
	case chart == "mostPopular":
		return f.chart(q, want)
	case chart != "":
		return nil, errParam("invalidChart", "chart", fmt.Sprintf("Invalid value '%s'.", chart))
	}
	return nil, errParam("missingRequiredParameter", "", "No filter selected. Expected one of: myRating, chart, id")
}

func (f *Fake) videosByID(q url.Values, want map[string]bool) (any, *apiError) {
	var ids []string
	for _, v := range q["id"] {
		ids = append(ids, strings.Split(v, ",")...)
	}
	if len(ids) > 50 {
		return nil, errParam("invalidFilters", "id", "The request specifies more than 50 video ids.")
	}
	resp := &listResponse{Kind: "youtube#videoListResponse", Items: []any{}}
	for _, id := range ids {
		if v := f.lookup(strings.TrimSpace(id)); v != nil {
			resp.Items = append(resp.Items, render(v, want))
		}
	}
	resp.Etag = etag("ids", strings.Join(ids, ","))
	resp.PageInfo = pageInfo{TotalResults: len(resp.Items), ResultsPerPage: len(resp.Items)}
	return resp, nil
}

func (f *Fake) chart(q url.Values, want map[string]bool) (any, *apiError) {
	region := strings.ToUpper(q.Get("regionCode"))
	if region == "" {
		region = "US"
	}
	list, ok := f.chartNow(region)
	if !ok || f.chartMissing(region) {
		return nil, errNoChart()
	}
	category := q.Get("videoCategoryId")
	if category != "" && category != "0" {
		// A category chart: the region's videos of that category, in rank
		// order; none is no chart, as the upstream answers.
		if list = ofCategory(list, category); len(list) == 0 {
			return nil, errNoChart()
		}
	}
	n, e := maxResults(q, 5)
	if e != nil {
		return nil, e
	}
	if shape := f.chartShape(); shape.videos > 0 || shape.perPage > 0 {
		if shape.videos > 0 && len(list) > shape.videos {
			list = list[:shape.videos]
		}
		if shape.perPage > 0 {
			n = min(n, shape.perPage)
		}
	}
	start, e := f.offset(q.Get("pageToken"), len(list), "chart", region, category)
	if e != nil {
		return nil, e
	}
	resp := &listResponse{Kind: "youtube#videoListResponse", Items: []any{},
		PageInfo: pageInfo{TotalResults: len(list), ResultsPerPage: n}}
	end := min(start+n, len(list))
	for _, v := range list[start:end] {
		resp.Items = append(resp.Items, render(v, want))
	}
	resp.NextPageToken, resp.PrevPageToken = f.tokens(start, end, n, len(list), "chart", region, category)
	resp.Etag = etag("chart", region, category, strconv.Itoa(start), strconv.Itoa(n))
	if start == 0 {
		f.servedFirstPage(region)
	}
	return resp, nil
}

func ofCategory(list []*video, category string) []*video {
	var out []*video
	for _, v := range list {
		if v.CategoryID == category {
			out = append(out, v)
		}
	}
	return out
}

// offset decodes a page token for the query named by scopeParts.
func (f *Fake) offset(tok string, total int, scopeParts ...string) (int, *apiError) {
	if tok == "" {
		return 0, nil
	}
	off, ok := decodeToken(tok, f.epoch.Load(), scope(scopeParts...))
	if !ok || off > total {
		return 0, errPageToken()
	}
	return off, nil
}

func (f *Fake) tokens(start, end, n, total int, scopeParts ...string) (next, prev string) {
	ep, sig := f.epoch.Load(), scope(scopeParts...)
	if end < total && n > 0 {
		next = encodeToken(end, ep, sig)
	}
	if start > 0 {
		prev = encodeToken(max(0, start-n), ep, sig)
	}
	return next, prev
}

func render(v *video, want map[string]bool) videoItem {
	it := videoItem{head: head{"youtube#video", etag("video", v.ID, strconv.FormatUint(v.Views, 10)), v.ID}}
	if want["snippet"] {
		it.Snippet = &videoSnippet{snippet: snippetOf(v, v.Description),
			Tags: v.Tags, CategoryID: v.CategoryID, LiveBroadcastContent: cmp.Or(v.Live, "none"), DefaultAudioLanguage: v.AudioLang, DefaultLanguage: v.TextLang,
			Localized: localized{Title: v.Title, Description: v.Description}}
	}
	if want["contentDetails"] {
		it.ContentDetails = &contentDetails{Duration: v.Duration, Dimension: "2d", Definition: "hd",
			Caption: "false", LicensedContent: true, ContentRating: map[string]any{}, Projection: "rectangular"}
		if len(v.Blocked) > 0 {
			it.ContentDetails.RegionRestriction = &regionRestriction{Blocked: v.Blocked}
		}
	}
	if want["statistics"] && !v.NoStats {
		s := &statistics{ViewCount: strconv.FormatUint(v.Views, 10), FavoriteCount: "0"}
		if !v.HideLikes {
			s.LikeCount = strconv.FormatUint(v.Likes, 10)
		}
		if !v.HideComments {
			s.CommentCount = strconv.FormatUint(v.Comments, 10)
		}
		it.Statistics = s
	}
	return it
}

func thumbs(id string) thumbnails {
	u := "https://i.ytimg.com/vi/" + id + "/"
	return thumbnails{Default: thumbnail{u + "default.jpg", 120, 90}, Medium: thumbnail{u + "mqdefault.jpg", 320, 180},
		High: thumbnail{u + "hqdefault.jpg", 480, 360}}
}

// searchList answers search.list over the region's corpus: its chart and
// its search-only videos.
func (f *Fake) searchList(q url.Values) (any, *apiError) {
	want, e := parts(q, "snippet", "id")
	if e != nil {
		return nil, e
	}
	if t := q.Get("type"); t != "" && !strings.Contains(t, "video") {
		return &listResponse{Kind: "youtube#searchListResponse", Etag: etag("search-empty"), Items: []any{}}, nil
	}
	after, before, e := window(q)
	if e != nil {
		return nil, e
	}
	n, e := maxResults(q, 5)
	if e != nil {
		return nil, e
	}
	region := strings.ToUpper(q.Get("regionCode"))
	hits := f.match(region, foldText(q.Get("q")), after, before, q.Get("order"))
	sc := []string{"search", region, q.Get("q"), q.Get("publishedAfter"), q.Get("publishedBefore"), q.Get("order")}
	start, e := f.offset(q.Get("pageToken"), len(hits), sc...)
	if e != nil {
		return nil, e
	}
	end := min(start+n, len(hits))
	resp := &listResponse{Kind: "youtube#searchListResponse", RegionCode: region, Items: []any{},
		PageInfo: pageInfo{TotalResults: len(hits), ResultsPerPage: n}}
	if resp.RegionCode == "" {
		resp.RegionCode = "US"
	}
	for _, v := range hits[start:end] {
		it := searchItem{Kind: "youtube#searchResult", Etag: etag("search", v.ID), ID: searchID{"youtube#video", v.ID}}
		if want["snippet"] {
			sn := snippetOf(v, firstLine(v.Description))
			it.Snippet = &searchSnippet{snippet: sn, LiveBroadcastContent: "none", PublishTime: sn.PublishedAt}
		}
		resp.Items = append(resp.Items, it)
	}
	resp.NextPageToken, resp.PrevPageToken = f.tokens(start, end, n, len(hits), sc...)
	resp.Etag = etag(append(sc, strconv.Itoa(start))...)
	return resp, nil
}

func window(q url.Values) (after, before time.Time, e *apiError) {
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"publishedAfter", &after}, {"publishedBefore", &before}} {
		s := q.Get(p.name)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return after, before, errParam("invalidParameter", p.name, fmt.Sprintf("Invalid value '%s'. Expected an RFC 3339 date-time.", s))
		}
		*p.t = t
	}
	return after, before, nil
}

// match returns the region's videos that have every word of q, published
// in [after, before), in the order asked for. No region: every region.
func (f *Fake) match(region, q string, after, before time.Time, order string) []*video {
	var pool []*video
	if region != "" {
		pool = f.fx.searchable(region)
	} else {
		for _, r := range regions.Default {
			pool = append(pool, f.fx.searchable(r)...)
		}
	}
	words := strings.Fields(strings.NewReplacer(`"`, " ", "|", " ").Replace(q))
	seen, out := map[string]bool{}, []*video{}
	for _, v := range pool {
		v = f.edited(v)
		if seen[v.ID] || (!after.IsZero() && v.PublishedAt.Before(after)) || (!before.IsZero() && !v.PublishedAt.Before(before)) {
			continue
		}
		text := foldText(v.Title + " " + v.Description + " " + strings.Join(v.Tags, " ") + " " + v.ChannelTitle)
		if hasAll(text, words) {
			seen[v.ID] = true
			out = append(out, v)
		}
	}
	out = f.without(out)
	sortVideos(out, order)
	return out
}

func hasAll(text string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

func sortVideos(vs []*video, order string) {
	switch order {
	case "date":
		sort.SliceStable(vs, func(a, b int) bool { return vs[a].PublishedAt.After(vs[b].PublishedAt) })
	case "title":
		sort.SliceStable(vs, func(a, b int) bool { return vs[a].Title < vs[b].Title })
	default: // viewCount, and relevance, which the fake ranks the same way
		sort.SliceStable(vs, func(a, b int) bool { return vs[a].Views > vs[b].Views })
	}
}

var folder = strings.NewReplacer("ä", "a", "ö", "o", "ü", "u", "ß", "ss", "é", "e", "è", "e", "ê", "e", "ë", "e",
	"à", "a", "â", "a", "á", "a", "ã", "a", "ç", "c", "î", "i", "ï", "i", "í", "i", "ô", "o", "ó", "o", "õ", "o",
	"ú", "u", "û", "u", "ù", "u")

// foldText lowercases and drops Latin diacritics, so "muller" finds "Müller"
// as it does on the real site.
func foldText(s string) string { return folder.Replace(strings.ToLower(s)) }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
