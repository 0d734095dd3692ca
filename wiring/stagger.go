package wiring

import (
	"time"

	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// Stagger is the staggered slots of the i-th of charts at every, each at
// tier 1, as a schedule read back from the ledger has them; nil when every
// cannot be staggered.
func Stagger(charts []string, every time.Duration) func(i int) pace.Slots {
	return ChartStagger(regions.Charts(charts...), every)
}

// ChartStagger is the i-th of charts' slots at every, at its tier's
// period, as the daemon staggers them (regions.Stagger); nil when every
// cannot be staggered.
func ChartStagger(charts []regions.Chart, every time.Duration) func(i int) pace.Slots {
	return func(i int) pace.Slots {
		s, err := charts[i].Stagger(every, i, len(charts))
		if err != nil {
			return nil
		}
		return s
	}
}
