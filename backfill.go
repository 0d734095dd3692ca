package ingest

import (
	"strings"
	"time"
)

// SearchQuery is one backfill's search: videos of Region published in
// [After, Before), matching Query when it is not empty, by view count.
type SearchQuery struct {
	Region string
	After  time.Time
	Before time.Time
	Query  string
}

// BackfillID is what names a backfill: the same command names the same
// backfill, so running it again resumes it. Until is --until as given; zero
// means open-ended, which is a value of its own, never "now".
type BackfillID struct {
	Region string
	Since  time.Time
	Until  time.Time // zero: open-ended
	Query  string
}

// Key is the cursor key of the backfill: region|since|until|query, with
// an empty until when open-ended.
func (id BackfillID) Key() string {
	until := ""
	if !id.Until.IsZero() {
		until = id.Until.UTC().Format(time.RFC3339)
	}
	return strings.Join([]string{strings.ToUpper(id.Region), id.Since.UTC().Format(time.RFC3339), until, id.Query}, "|")
}

// OpenEnded says whether the backfill was given no --until.
func (id BackfillID) OpenEnded() bool { return id.Until.IsZero() }

// Cursor is where a backfill got to, saved with every stored page so that
// running the same backfill again continues where it stopped.
type Cursor struct {
	Key string // BackfillID.Key
	ID  BackfillID
	// Before is the publishedBefore the backfill's searches send: its
	// --until, or for an open-ended one the time of its first page, kept so
	// that the page tokens of a resumed search stay valid.
	Before    time.Time
	PageToken string // the next page to fetch; empty before the first
	// Pending are the videos of page Pages+1, whose search the upstream
	// answered (and charged) before their details were stored: a resumed
	// backfill details them first, without searching again. PageToken is
	// then the page after it.
	Pending []string
	Pages   int
	Videos  int
	Units   int64
	// Reached is how far the backfill has got (its oldest published time).
	Reached time.Time
	Done    bool
	Updated time.Time // set by the store
}
