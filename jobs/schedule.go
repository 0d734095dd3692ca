package jobs

import (
	"github.com/ingestworks/ingest/regions"
)

// MinEvery is the shortest schedule period allowed.
const MinEvery = regions.MinEvery

// Schedule is an entry's staggered slots as the daemon fires them on the
// house clock (Daemon.fire): the stagger itself (which chart runs when in a
// period, and a tier's period) is the regions' (regions.Stagger).
type Schedule = regions.Slots
