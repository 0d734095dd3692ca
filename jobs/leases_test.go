package jobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
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

// taken is a locker whose every lease another process holds.
type taken struct{}

func (taken) Lock(context.Context, string, time.Duration) (func(), bool, error) {
	return func() {}, false, nil
}

// TestALostSlotLeaseIsNoWarning: a daemon replica that loses each slot's
// lease to another runs none of them and warns of none: that is the lease
// working. A command run once that finds its work taken warns.
func TestALostSlotLeaseIsNoWarning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, lim := storeAndLimiter(t)
		drain := make(chan struct{})
		var out bytes.Buffer
		r := daemon(db, lim, &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}, drain)
		r.Locker, r.Logger = taken{}, slog.New(slog.NewTextHandler(&out, nil))
		d := &jobs.Daemon{Roster: jobs.Roster{Runner: r, Every: 8 * time.Minute}}
		done := make(chan error)
		go func() { done <- d.Run(context.Background()) }()
		time.Sleep(20*time.Minute + 10*time.Second)
		close(drain)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "level=WARN msg=\"pass skipped: already running in another process"); n != 0 {
			t.Errorf("a replica that lost every slot's lease warned %d times:\n%s", n, out.String())
		}
		out.Reset()
		once := daemon(db, lim, &slowSource{took: map[string]time.Duration{}, at: map[string][]time.Time{}}, nil)
		once.Locker, once.Logger = taken{}, slog.New(slog.NewTextHandler(&out, nil))
		once.RunPass(context.Background(), once.Passes[0])
		if !strings.Contains(out.String(), "level=WARN msg=\"pass skipped: already running in another process") {
			t.Errorf("a pass run once whose lease another holds does not warn:\n%s", out.String())
		}
	})
}
