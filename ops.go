package ingest

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
