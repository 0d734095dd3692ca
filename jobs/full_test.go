package jobs_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/quota"
)

// fullLimiter is the embedded limiter whose write of op's decision meets
// the full disk under the database it shares with the store.
type fullLimiter struct {
	*quota.SQLite
	op   string
	full error
}

func (l fullLimiter) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	if op == l.op {
		return ingest.Decision{}, l.full
	}
	return l.SQLite.Take(ctx, by, op)
}

// TestAPassSaysTheFullDiskItsLimiterMet: a pass whose limiter, embedded in
// the database, meets the full disk before a call (the category names'
// first, then a page's) fails as the docs say a full disk: the database
// and the fix in its message, the way every other chart would go too
// (Fatal), not in SQLite's own words.
func TestAPassSaysTheFullDiskItsLimiterMet(t *testing.T) {
	for _, op := range []string{ingest.OpCategoriesList, ingest.OpVideosList} {
		t.Run(op, func(t *testing.T) {
			r := newRig(t, "")
			p := r.pass("IN")
			p.Limiter = fullLimiter{r.limiter, op, storetest.DiskFull(t, r.db)}
			res := p.Run(context.Background())
			if res.Status != ingest.StatusFailed || !res.Fatal {
				t.Fatalf("the pass ended %s (fatal %t): %v, want failed for every chart", res.Status, res.Fatal, res.Err)
			}
			if !errors.Is(res.Err, ingest.ErrDiskFull) {
				t.Errorf("%v: not said as the full disk", res.Err)
			}
			if msg := res.Message; !strings.Contains(msg, r.db.Path()+": the disk is full") ||
				!strings.Contains(msg, filepath.Dir(r.db.Path())) || !strings.Contains(msg, "free space there") {
				t.Errorf("the run's message %q, want the database, its directory and the fix", msg)
			}
			if n, led := r.fake.Charged(testKey), r.ledgerUnits(t); n != led {
				t.Errorf("the upstream charged %d units, the ledger holds %d: a call went out that the limiter never decided", n, led)
			}
		})
	}
}
