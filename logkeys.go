package ingest

// Attribute keys of the log lines every part writes, in one place, so that
// a query over JSON logs finds the same key whoever wrote the line.
const (
	LogRegion    = "region"
	LogOp        = "op"
	LogPool      = "pool"
	LogUnits     = "units"
	LogRemaining = "remaining"
	LogStatus    = "status"
	LogPage      = "page"
	LogPages     = "pages"
	LogVideos    = "videos"
	LogEntries   = "entries" // chart entries or search results, a video once per chart
	LogDuration  = "duration"
	LogRetryAt   = "retry_at"
	LogErr       = "err"
	LogID        = "id"    // a limiter call's id, "<ms>-<seq>"
	LogCalls     = "calls" // how many calls (a refill, a ledger)
	LogPlan      = "plan"  // a plan of the read API's clients
	// LogDetail carries a run's message: not "msg", which the handler
	// writes itself (a second msg key makes a JSON line parsers disagree on).
	LogDetail = "detail"
)
