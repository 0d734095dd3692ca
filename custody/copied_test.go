package custody

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
)

// copyOf is a copy of the database at src, as db copy leaves it: a new
// database whose note names its source, copied at.
func copyOf(t *testing.T, src *Database, srcPath string, at time.Time) (string, *Database) {
	t.Helper()
	path, dst := database(t)
	if err := NoteCopySource(context.Background(), src.Ledger, dst.Ledger, srcPath, at); err != nil {
		t.Fatal(err)
	}
	return path, dst
}

// TestACopysWorkerCountsItsSourcesCalls: a worker on the embedded limiter
// on a copy takes into its ledger the calls its source gained after the
// copy, once, and no call older than the window; a worker on Redis takes
// none (the Redis holds them).
func TestACopysWorkerCountsItsSourcesCalls(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	srcPath, src := database(t)
	record(t, src.Ledger, call("before", start.Add(-time.Hour), 1))
	cpPath, cp := copyOf(t, src, srcPath, start)
	record(t, cp.Ledger, call("before", start.Add(-time.Hour), 1))
	record(t, src.Ledger, call("after", start.Add(time.Minute), 2), call("stale", start.Add(-25*time.Hour), 1))
	c.Advance(time.Hour)
	h := host(t, cpPath, "", c)
	onRedis, _, err := h.Working(ctx, cp, true, key)
	if err != nil {
		t.Fatal(err)
	}
	onRedis()
	if got := ids(t, cp.Ledger, c.Now()); slices.Contains(got, "after") {
		t.Errorf("a worker on Redis took the source's calls: %v", got)
	}
	for range 2 {
		release, _, err := h.Working(ctx, cp, false, key)
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	if got := ids(t, cp.Ledger, c.Now()); !slices.Equal(got, []string{"before", "after"}) {
		t.Errorf("the copy's calls: %v, want before and after, each once", got)
	}
}

// TestACopyAndItsSourceNeverRunTogether: while a worker runs on a copy,
// it holds a lease on the source, and a worker there is refused naming
// it; once it stops, the source's worker starts and counts the copy's
// calls. While the source's worker runs, a copy's is refused in turn.
func TestACopyAndItsSourceNeverRunTogether(t *testing.T) {
	ctx := context.Background()
	c := clocktest.NewFake(start)
	srcPath, src := database(t)
	cpPath, cp := copyOf(t, src, srcPath, start)
	onCopy, onSource := host(t, cpPath, "", c), host(t, srcPath, "", c)
	release, _, err := onCopy.Working(ctx, cp, false, key)
	if err != nil {
		t.Fatal(err)
	}
	record(t, cp.Ledger, call("on-copy", start.Add(time.Minute), 3))
	_, _, err = onSource.Working(ctx, src, false, key)
	if cl := refused[*CopyLiveError](t, err); len(cl.Workers) != 1 {
		t.Errorf("the copy's workers named: %+v", cl.Workers)
	}
	release()
	c.Advance(time.Hour)
	release, _, err = onSource.Working(ctx, src, false, key)
	if err != nil {
		t.Fatalf("the copy's worker stopped: %v", err)
	}
	defer release()
	if got := ids(t, src.Ledger, c.Now()); !slices.Contains(got, "on-copy") {
		t.Errorf("the source's calls: %v, want the copy's call counted", got)
	}
	_, _, err = onCopy.Working(ctx, cp, false, key)
	if sl := refused[*SourceLiveError](t, err); sl.Source == "" || len(sl.Live.Workers) != 1 {
		t.Errorf("got %+v, want the source and its worker named", sl)
	}
}

// TestLiveNamesTheWorkerAndItsLastPass: a database a worker holds is live,
// with the worker and, when there is one, its last pass; one no worker
// holds is not.
func TestLiveNamesTheWorkerAndItsLastPass(t *testing.T) {
	ctx := context.Background()
	_, db := database(t)
	if err := Live(ctx, db); err != nil {
		t.Fatalf("no worker: %v", err)
	}
	host, _ := os.Hostname()
	release, err := db.Ledger.HoldWorker(ctx, host, os.Getpid(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var le *LiveError
	if err := Live(ctx, db); !errors.As(err, &le) || len(le.Workers) != 1 || le.Source != db.Path || le.Last != "" {
		t.Errorf("got %v, want a *LiveError naming one worker, the database and no pass", err)
	}
	release()
	if err := Live(ctx, db); err != nil {
		t.Errorf("the worker released: %v", err)
	}
}

// TestLiveSourceIsNamedAsMessagesName: a copy's source a worker holds is
// live, named as the command names it (a PostgreSQL URL without its
// password), never by the path the copy opened; one no worker holds is
// not, and a source that cannot be read is the copy's failure.
func TestLiveSourceIsNamedAsMessagesName(t *testing.T) {
	ctx := context.Background()
	_, db := database(t)
	if le, err := LiveSource(ctx, db, "postgres://ingest@db/ingest"); le != nil || err != nil {
		t.Fatalf("no worker: %v, %v", le, err)
	}
	host, _ := os.Hostname()
	release, err := db.Ledger.HoldWorker(ctx, host, os.Getpid(), nil)
	if err != nil {
		t.Fatal(err)
	}
	le, err := LiveSource(ctx, db, "postgres://ingest@db/ingest")
	if err != nil || le == nil || le.Source != "postgres://ingest@db/ingest" || len(le.Workers) != 1 {
		t.Errorf("got %+v, %v; want the worker, the source named as given", le, err)
	}
	release()
	db.Close()
	if _, err := LiveSource(ctx, db, "x"); err == nil || !strings.HasPrefix(err.Error(), "db copy: source: ") {
		t.Errorf("a source that cannot be read: %v, want the copy's error", err)
	}
}

// spender is a limiter that admits every call, and says what it gave back.
type spender struct{ took, gave []string }

func (s *spender) Take(_ context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	id := op + "-" + by.Region
	s.took = append(s.took, id)
	return ingest.Decision{Allowed: true, ID: id, Op: op}, nil
}

func (s *spender) Refund(_ context.Context, call ingest.Call) error {
	s.gave = append(s.gave, call.ID)
	return nil
}

// TestALeashedCallAsksTheGuardBeforeAndAfter: a guard that fails before
// the call stops it untaken; one that fails after its admission gives the
// call back, so that nothing is spent beside a source's worker.
func TestALeashedCallAsksTheGuardBeforeAndAfter(t *testing.T) {
	stalled := errors.New("stalled past its lease")
	for _, tc := range []struct {
		name       string
		failAt     int // the guard's asking that fails, 0 for none
		took, gave int
	}{
		{"held", 0, 1, 0},
		{"lapsed before", 1, 0, 0},
		{"lapsed after its admission", 2, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &spender{}
			asked := 0
			guard := func(context.Context) error {
				if asked++; asked == tc.failAt {
					return stalled
				}
				return nil
			}
			d, err := Leashed(context.Background(), s, key, guard, ingest.Caller{Region: "US"}, ingest.OpVideosList)
			if len(s.took) != tc.took || len(s.gave) != tc.gave {
				t.Errorf("took %v, gave back %v; want %d and %d", s.took, s.gave, tc.took, tc.gave)
			}
			if (tc.failAt != 0) != errors.Is(err, stalled) || (err == nil) != d.Allowed {
				t.Errorf("got %+v, %v", d, err)
			}
		})
	}
}

// TestTakeCallsTakesWhatIsMissing: of another ledger's calls of the
// window, those this one lacks are taken, with their units; the others
// are left as they are.
func TestTakeCallsTakesWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	_, a := database(t)
	_, b := database(t)
	record(t, a.Ledger, call("both", start, 1), call("a", start, 1))
	record(t, b.Ledger, call("both", start, 1), call("b1", start, 2), call("b2", start, 3), call("other", start, 1))
	n, units, err := takeCalls(ctx, a.Ledger, b.Ledger, key, start.Add(-time.Hour), start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 || units != 6 {
		t.Errorf("took %d calls of %d units, want 3 of 6", n, units)
	}
	if got := ids(t, a.Ledger, start.Add(time.Hour)); len(got) != 5 {
		t.Errorf("a's calls: %v, want five", got)
	}
}
