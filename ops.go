package ingest

import (
	"slices"
	"strings"
)

// The upstream operations the worker calls, as costs.yaml prices them and
// the ledger records them.
const (
	OpVideosList     = "videos.list"
	OpCategoriesList = "videoCategories.list"
	OpRegionsList    = "i18nRegions.list"
	OpSearchList     = "search.list"
	OpBatchGetStats  = "videos.batchGetStats"
)

// Fetch is a piece of work a job does upstream, by which a plan counts
// calls: a chart page each cycle, a region's categories once a day, a
// page of a backfill's search, a batch of tracked videos at each reading.
type Fetch string

const (
	FetchChartPage  Fetch = "chart page"  // one page of a chart, every cycle
	FetchCategories Fetch = "categories"  // a region's categories, once a day
	FetchSearchPage Fetch = "search page" // one page of a backfill's search
	FetchStats      Fetch = "stats batch" // a batch of tracked videos, every reading
	FetchCheck      Fetch = "key check"   // ingest check's one call with the key
)

// Operation is one upstream operation, defined once here: its name, the
// path the upstream serves it at, what one call costs the upstream's
// quota, and which fetches make one call of it each. The costs file must
// price every operation, a plan counts their calls by Fetches, and the
// fake upstream serves Path and charges Cost.
type Operation struct {
	Name string
	// Path is the operation's REST path under the API's base URL.
	Path string
	// Cost is what the upstream charges one call, failed calls included;
	// the built-in costs.yaml prices the operation the same.
	Cost []Charge
	// Fetches are the pieces of work that make one call of it each.
	Fetches []Fetch
}

// Operations lists every operation the worker can call.
var Operations = []Operation{
	{Name: OpVideosList, Path: "videos", Cost: []Charge{{Pool: DefaultPool, Units: 1}},
		Fetches: []Fetch{FetchChartPage, FetchSearchPage}},
	{Name: OpCategoriesList, Path: "videoCategories", Cost: []Charge{{Pool: DefaultPool, Units: 1}},
		Fetches: []Fetch{FetchCategories, FetchCheck}},
	{Name: OpRegionsList, Path: "i18nRegions", Cost: []Charge{{Pool: DefaultPool, Units: 1}}},
	{Name: OpSearchList, Path: "search", Cost: []Charge{{Pool: "search", Units: 1}},
		Fetches: []Fetch{FetchSearchPage}},
	{Name: OpBatchGetStats, Path: "videos:batchGetStats", Cost: []Charge{{Pool: "stats", Units: 1}},
		Fetches: []Fetch{FetchStats}},
}

// OperationNamed returns the operation called name.
func OperationNamed(name string) (Operation, bool) {
	for _, o := range Operations {
		if o.Name == name {
			return o, true
		}
	}
	return Operation{}, false
}

// Calls lists the operations one f calls, once each, in registry order.
func (f Fetch) Calls() []string {
	var names []string
	for _, o := range Operations {
		for _, g := range o.Fetches {
			if g == f {
				names = append(names, o.Name)
			}
		}
	}
	return names
}

// VideoSource is where one field of a Video is read in the upstream's
// answer: Field names the Video field, Path its place in a videos.list
// item as fields= names it (a/b for b inside a).
type VideoSource struct {
	Field string
	Path  string
}

// VideoSources is the one list of what a video's answer is read for: each
// field the store writes, the exports read and the pages show comes from
// one of these, and nothing else is asked for. The store's table of fields
// is held to it, and the fetch's reading of a video to the answer pruned
// to it, so a field kept without being asked for, or asked for without
// being kept, fails a test. The terms need nothing more: a video is its
// id, and when it was fetched is our own clock's.
var VideoSources = []VideoSource{
	{Field: "ID", Path: "id"},
	{Field: "Title", Path: "snippet/title"},
	{Field: "Description", Path: "snippet/description"},
	{Field: "Tags", Path: "snippet/tags"},
	{Field: "ChannelID", Path: "snippet/channelId"},
	{Field: "ChannelTitle", Path: "snippet/channelTitle"},
	{Field: "CategoryID", Path: "snippet/categoryId"},
	{Field: "PublishedAt", Path: "snippet/publishedAt"},
	{Field: "Thumbnail", Path: "snippet/thumbnails/default/url"},
	{Field: "AudioLanguage", Path: "snippet/defaultAudioLanguage"},
	{Field: "Language", Path: "snippet/defaultLanguage"},
	{Field: "Duration", Path: "contentDetails/duration"},
	{Field: "ViewCount", Path: "statistics/viewCount"},
	{Field: "LikeCount", Path: "statistics/likeCount"},
	{Field: "CommentCount", Path: "statistics/commentCount"},
}

// VideoParts are the parts (part=) a video's answer is asked in: the first
// step of each of VideoSources' paths but the id, which every part carries.
func VideoParts() []string {
	var parts []string
	for _, s := range VideoSources {
		p, _, nested := strings.Cut(s.Path, "/")
		if nested && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return parts
}

// Keeps lists the paths of an operation's answer the worker reads, in
// fields= terms: what each call asks the upstream for, and all it gets.
// Error bodies are never filtered.
func Keeps(op string) []string {
	switch op {
	case OpVideosList:
		return append(within("items", videoPaths()), "nextPageToken")
	case OpSearchList:
		return []string{"items/id/videoId", "nextPageToken"}
	case OpCategoriesList:
		return []string{"items/id", "items/snippet/title"}
	case OpRegionsList:
		return []string{"items/snippet/gl", "items/snippet/name"}
	case OpBatchGetStats:
		return within("items", []string{"id", "statistics/viewCount", "statistics/likeCount", "statistics/commentCount"})
	}
	return nil
}

func videoPaths() []string {
	out := make([]string, len(VideoSources))
	for i, s := range VideoSources {
		out[i] = s.Path
	}
	return out
}

func within(parent string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = parent + "/" + p
	}
	return out
}

// Fields is paths as one fields= value, those sharing a parent grouped in
// its parentheses (items(id,snippet(title,tags))), in their first order.
func Fields(paths []string) string {
	type node struct {
		name string
		kids []*node
	}
	root := &node{}
	for _, p := range paths {
		n := root
		for _, step := range strings.Split(p, "/") {
			i := slices.IndexFunc(n.kids, func(k *node) bool { return k.name == step })
			if i < 0 {
				n.kids = append(n.kids, &node{name: step})
				i = len(n.kids) - 1
			}
			n = n.kids[i]
		}
	}
	var render func(n *node) string
	render = func(n *node) string {
		var out []string
		for _, k := range n.kids {
			switch len(k.kids) {
			case 0:
				out = append(out, k.name)
			case 1:
				out = append(out, k.name+"/"+render(k))
			default:
				out = append(out, k.name+"("+render(k)+")")
			}
		}
		return strings.Join(out, ",")
	}
	return render(root)
}
