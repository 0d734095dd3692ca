package jobs_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/ingestworks/ingest/jobs"
)

// names is a locker that grants every lease and says which were asked.
type names []string

func (n *names) Lock(_ context.Context, name string, _ time.Duration) (func(), bool, error) {
	*n = append(*n, name)
	return func() {}, true, nil
}

// TestAJobsLeaseIsItsLedgers: per ledger, a job's lease is named for the
// ledger and a chart's keeps the name every host shares.
func TestAJobsLeaseIsItsLedgers(t *testing.T) {
	var asked names
	l := jobs.PerLedger(&asked, "L1")
	for _, name := range []string{"job:prune", "region:US", "job:track"} {
		if _, ok, err := l.Lock(context.Background(), name, time.Minute); !ok || err != nil {
			t.Fatalf("%s: %v, %v", name, ok, err)
		}
	}
	if want := []string{"job:prune@L1", "region:US", "job:track@L1"}; !slices.Equal(asked, want) {
		t.Errorf("asked %v, want %v", asked, want)
	}
}
