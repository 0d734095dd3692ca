package wiring

import (
	"time"

	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/pace"
)

// Stagger is the staggered slots of the i-th of charts at every, as the
// daemon's; nil when every cannot be staggered.
func Stagger(charts []string, every time.Duration) func(i int) pace.Slots {
	return func(i int) pace.Slots {
		s, err := jobs.Stagger(every, i, len(charts))
		if err != nil {
			return nil
		}
		return s
	}
}
