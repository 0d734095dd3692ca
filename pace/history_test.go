package pace_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
)

// followedRecords is Records whose whole read of the calls fails: only a
// read through its follower answers.
type followedRecords struct {
	follows int
	since   []time.Time
}

func (r *followedRecords) Calls(context.Context, string, time.Time) ([]ingest.Call, error) {
	return nil, errors.New("read whole")
}
func (r *followedRecords) Follow(string) func(context.Context, time.Time) ([]ingest.Call, error) {
	r.follows++
	return func(_ context.Context, since time.Time) ([]ingest.Call, error) {
		r.since = append(r.since, since)
		return []ingest.Call{{ID: "1-1", At: since, Charges: []ingest.Charge{{Pool: ingest.DefaultPool, Units: 3}}}}, nil
	}
}
func (r *followedRecords) LastPasses(context.Context, string, time.Time) (map[string]time.Time, error) {
	return nil, nil
}
func (*followedRecords) StoppedPasses(context.Context, time.Time) ([]ingest.Stopped, error) {
	return nil, nil
}
func (r *followedRecords) PassCosts(context.Context, string, time.Time) (map[string]map[string]float64, error) {
	return nil, nil
}
func (r *followedRecords) Plan(context.Context, string) ([]byte, time.Time, bool, error) {
	return nil, time.Time{}, false, nil
}

// TestHistoryReadsThroughOneFollower: records that can follow their
// ledger are read through one follower for every History, each from the
// pools' history at its time.
func TestHistoryReadsThroughOneFollower(t *testing.T) {
	r := &followedRecords{}
	pools := []ingest.Pool{{Name: ingest.DefaultPool, Limit: 100, Window: time.Hour}}
	history := pace.FromRecords(r, "q", pools)
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Minute)
		h, err := history(context.Background(), at)
		if err != nil {
			t.Fatalf("history %d: %v", i, err)
		}
		if got := h.Spent[ingest.DefaultPool]; len(got) != 1 || got[0].Units != 3 {
			t.Fatalf("history %d: spent %+v, want the follower's one call of 3 units", i, got)
		}
		if want := pace.HistorySince(pools, at); !r.since[i].Equal(want) {
			t.Fatalf("history %d read from %s, want %s", i, r.since[i], want)
		}
	}
	if r.follows != 1 {
		t.Fatalf("%d followers made, want one for every History", r.follows)
	}
}

// savedPlans is a PlanSaver that keeps the last plan, or fails.
type savedPlans struct {
	key string
	at  time.Time
	doc []byte
	err error
}

func (s *savedPlans) SavePlan(ctx context.Context, key string, at time.Time, doc []byte) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	s.key, s.at, s.doc = key, at, doc
	return s.err
}

// TestKeepKeepsEveryPlanAsItIsRead: a plan a pacer publishes is kept
// under its quota key, at its time, as the next pacer and the reports read
// it back, even when the run that made it is ending; one that cannot be
// kept is said.
func TestKeepKeepsEveryPlanAsItIsRead(t *testing.T) {
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	db := &savedPlans{}
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	ending, cancel := context.WithCancel(context.Background())
	cancel()
	pace.Keep(db, "q", log)(ending, pace.Status{At: at, Shared: true})
	var back pace.Status
	if err := json.Unmarshal(db.doc, &back); err != nil || db.key != "q" || !db.at.Equal(at) || !back.At.Equal(at) || !back.Shared {
		t.Errorf("kept %q at %v: %s (%v); want the plan of q at %v", db.key, db.at, db.doc, err, at)
	}
	if logs.Len() != 0 {
		t.Errorf("a plan kept said %q", logs.String())
	}
	db.err = errors.New("disk full")
	pace.Keep(db, "q", log)(context.Background(), pace.Status{At: at})
	if !strings.Contains(logs.String(), "disk full") {
		t.Errorf("a plan not kept said %q, want the failure", logs.String())
	}
}
