package ingest

import "time"

// SearchQuery is one backfill's search: videos of Region published in
// [After, Before), matching Query when it is not empty, by view count.
type SearchQuery struct {
	Region string
	After  time.Time
	Before time.Time
	Query  string
}

// Cursor is where a backfill got to, saved with every stored page so that
// running the same backfill again continues where it stopped.
type Cursor struct {
	Key       string // names the backfill: region, window and query
	PageToken string // the next page to fetch; empty before the first
	Pages     int
	Videos    int
	Units     int64
	// Reached is how far the backfill has got (its oldest published time).
	Reached time.Time
	Done    bool
	Updated time.Time // set by the store
}
