package metrics

import (
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/jobs"
)

// TestAgesKeepCompletedChartPasses: the observer a daemon's runner is
// handed tells its own observer of every run, and sets a chart's age to
// when its pass started only when the pass completed.
func TestAgesKeepCompletedChartPasses(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ages := NewAges(nil)
	told := 0
	observe := ages.Keep(func(jobs.Entry, jobs.Ended, time.Duration, time.Time) { told++ }, func() time.Time { return now })
	ended := func(status ingest.RunStatus, pass bool) jobs.Ended {
		e := jobs.Ended{RunEnd: ingest.RunEnd{Status: status}}
		if pass {
			e.Pass = &jobs.PassResult{}
		}
		return e
	}
	observe(jobs.Entry{Name: "US"}, ended(ingest.StatusCompleted, true), time.Minute, now)
	observe(jobs.Entry{Name: "GB"}, ended(ingest.StatusStopped, true), time.Minute, now)
	observe(jobs.Entry{Name: "track"}, ended(ingest.StatusCompleted, false), time.Minute, now)
	if told != 3 {
		t.Errorf("the runner's observer told %d times, want 3", told)
	}
	ages.mu.Lock()
	defer ages.mu.Unlock()
	if got, ok := ages.fetched["US"]; !ok || !got.Equal(now.Add(-time.Minute)) {
		t.Errorf("US's age from %v, want its pass's start %v", got, now.Add(-time.Minute))
	}
	for _, name := range []string{"GB", "track"} {
		if _, ok := ages.fetched[name]; ok {
			t.Errorf("%s has an age: only a completed chart pass sets one", name)
		}
	}
}
