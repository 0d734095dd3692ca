package ingest

// The upstream operations the worker calls, as costs.yaml prices them and
// the ledger records them. Every one of them must be priced in the costs
// file (ParseCosts checks).
const (
	OpVideosList     = "videos.list"
	OpCategoriesList = "videoCategories.list"
	OpRegionsList    = "i18nRegions.list"
	OpSearchList     = "search.list"
	OpBatchGetStats  = "videos.batchGetStats"
)

// Operations lists every operation the worker can call.
var Operations = []string{OpVideosList, OpCategoriesList, OpRegionsList, OpSearchList, OpBatchGetStats}
