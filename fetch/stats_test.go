package fetch_test

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// pools is what each operation costs in the 2026 costs.yaml (docs/contract.md):
// one unit of one pool. The gate's record priced by it is our ledger.
var pools = map[string]string{
	ingest.OpVideosList:     "default",
	ingest.OpCategoriesList: "default",
	ingest.OpRegionsList:    "default",
	ingest.OpSearchList:     "search",
	ingest.OpBatchGetStats:  "stats",
}

// ledger returns what the gate let through, in units per pool.
func (g *gateRec) ledger() map[string]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int64{}
	for _, op := range g.ops {
		out[pools[op]]++
	}
	return out
}

// chartIDs returns the ids of region's first chart page, in rank order.
func chartIDs(t *testing.T, e *env, region string) []string {
	t.Helper()
	p, err := e.client.Trending(context.Background(), e.gate.Gate, region, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, v := range p.Videos {
		ids = append(ids, v.ID)
	}
	return ids
}

// callOp makes one call of op through the client.
func callOp(e *env, op string) error {
	ctx := context.Background()
	var err error
	switch op {
	case ingest.OpVideosList:
		_, err = e.client.Trending(ctx, e.gate.Gate, "US", "")
	case ingest.OpCategoriesList:
		_, err = e.client.Categories(ctx, e.gate.Gate, "US", "")
	case ingest.OpSearchList:
		_, _, err = e.client.SearchPage(ctx, e.gate.Gate, ingest.SearchQuery{Region: "US", Query: "football"}, "")
	case ingest.OpBatchGetStats:
		_, err = e.client.Stats(ctx, e.gate.Gate, []string{"a", "b"})
	default:
		err = errors.New("callOp: no call for " + op)
	}
	return err
}

func TestStatsOfFiftyVideos(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := chartIDs(t, e, "US")
	if len(ids) != fetch.MaxStatsIDs {
		t.Fatalf("first US page has %d ids, want %d", len(ids), fetch.MaxStatsIDs)
	}
	raw := rawStats(t, e, "US")
	before := time.Now()
	stats, err := e.client.Stats(context.Background(), e.gate.Gate, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != len(ids) {
		t.Fatalf("%d stats, want %d", len(stats), len(ids))
	}
	var hidden, shown int
	for i, s := range stats {
		st := raw[ids[i]]
		if s.ID != ids[i] || s.At.Before(before) {
			t.Errorf("stat %d = %s at %s, want %s at or after %s", i, s.ID, s.At, ids[i], before)
		}
		if got := strconv.FormatInt(s.ViewCount, 10); got != st["viewCount"] || s.ViewCount == 0 {
			t.Errorf("%s views = %s, want %s", s.ID, got, st["viewCount"])
		}
		for name, got := range map[string]*int64{"likeCount": s.LikeCount, "commentCount": s.CommentCount} {
			want, sent := st[name]
			switch {
			case !sent && got != nil:
				t.Errorf("%s %s = %d, want nil (hidden)", s.ID, name, *got)
			case sent && (got == nil || strconv.FormatInt(*got, 10) != want):
				t.Errorf("%s %s = %v, want %s", s.ID, name, got, want)
			case sent:
				shown++
			default:
				hidden++
			}
		}
	}
	if hidden == 0 || shown == 0 {
		t.Errorf("hidden %d shown %d: want both on the first US page", hidden, shown)
	}
	want := []string{ingest.OpVideosList, ingest.OpBatchGetStats}
	if len(e.gate.ops) != 2 || e.gate.ops[1] != want[1] {
		t.Errorf("gate ops %v, want %v", e.gate.ops, want)
	}
	if got, ledger := e.fake.ChargedBuckets(key), e.gate.ledger(); !maps.Equal(got, ledger) || got["stats"] != 1 {
		t.Errorf("upstream charged %v, ledger %v: want equal, stats 1", got, ledger)
	}
}

func TestStatsUnknownAndNoIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	stats, err := e.client.Stats(context.Background(), e.gate.Gate, []string{"gone1", "gone2"})
	if err != nil || len(stats) != 0 {
		t.Errorf("unknown ids: %v, err %v; want none, no error", stats, err)
	}
	// The unknown ids take one call, or more where an attempt outlives
	// its delivery bound on a busy machine and is tried again; no ids
	// take none.
	before := e.gate.calls()
	if before < 1 {
		t.Errorf("unknown ids: gate calls = %d, want a call", before)
	}
	if stats, err = e.client.Stats(context.Background(), e.gate.Gate, nil); err != nil || stats != nil {
		t.Errorf("no ids: %v, err %v", stats, err)
	}
	if g := e.gate.calls(); g != before {
		t.Errorf("gate calls = %d after no ids, want %d (no ids is no call)", g, before)
	}
}

func TestStatsTooManyIDs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := make([]string, fetch.MaxStatsIDs+1)
	for i := range ids {
		ids[i] = "v" + strconv.Itoa(i)
	}
	_, err := e.client.Stats(context.Background(), e.gate.Gate, ids)
	if !errors.Is(err, fetch.ErrTooManyIDs) {
		t.Errorf("51 ids: err = %v, want ErrTooManyIDs", err)
	}
	if g, r := e.gate.calls(), e.fake.Requests(); g != 0 || r != 0 {
		t.Errorf("gate %d requests %d, want 0: nothing is spent on a call that cannot succeed", g, r)
	}
}

func TestStatsRetriedLikeTheOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := chartIDs(t, e, "GB")[:3]
	e.fake.FailNext(2, 503)
	stats, err := e.client.Stats(context.Background(), e.gate.Gate, ids)
	if err != nil || len(stats) != 3 {
		t.Fatalf("%d stats, err %v; want 3 after retries", len(stats), err)
	}
	want := map[string]int64{"default": 1, "stats": 3}
	if got, ledger := e.fake.ChargedBuckets(key), e.gate.ledger(); !maps.Equal(got, want) || !maps.Equal(ledger, want) {
		t.Errorf("upstream charged %v, ledger %v, want %v: every attempt passes the gate", got, ledger, want)
	}
}

// TestBucketExhausted spends each upstream bucket in turn. The call that
// finds it spent is a *QuotaExhaustedError naming the operation (so the job
// blocks the right pool), not retried; the other buckets go on; and the
// upstream's charges per bucket equal the ledger's per pool.
func TestBucketExhausted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		bucket, op string
		perMethod  bool
		others     []string
	}{
		{fakeyt.BucketDefault, ingest.OpVideosList, false, []string{ingest.OpSearchList, ingest.OpBatchGetStats}},
		{fakeyt.BucketSearch, ingest.OpSearchList, true, []string{ingest.OpVideosList, ingest.OpBatchGetStats}},
		{fakeyt.BucketStats, ingest.OpBatchGetStats, true, []string{ingest.OpVideosList, ingest.OpSearchList}},
	}
	for _, tc := range cases {
		t.Run(tc.bucket, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.fake.SetBucketQuota(tc.bucket, 1)
			if err := callOp(e, tc.op); err != nil {
				t.Fatalf("first %s: %v", tc.op, err)
			}
			before := time.Now()
			err := callOp(e, tc.op)
			var qe *ingest.QuotaExhaustedError
			if !errors.As(err, &qe) || !errors.Is(err, ingest.ErrQuotaExhausted) {
				t.Fatalf("err = %v, want *QuotaExhaustedError", err)
			}
			e.noKey(t, "error", err.Error())
			if qe.Op != tc.op || qe.PerMethod != tc.perMethod {
				t.Errorf("Op %q PerMethod %v, want %q %v", qe.Op, qe.PerMethod, tc.op, tc.perMethod)
			}
			if want := ingest.UpstreamReset(before); !qe.Reset.Equal(want) && !qe.Reset.Equal(ingest.UpstreamReset(time.Now())) {
				t.Errorf("Reset = %s, want %s", qe.Reset, want)
			}
			if g := e.gate.calls(); g != 2 {
				t.Errorf("gate calls = %d, want 2 (quota exhaustion is not retried)", g)
			}
			for _, op := range tc.others {
				if err := callOp(e, op); err != nil {
					t.Errorf("%s with %s spent: %v", op, tc.bucket, err)
				}
			}
			if got, ledger := e.fake.ChargedBuckets(key), e.gate.ledger(); !maps.Equal(got, ledger) || got[tc.bucket] != 2 {
				t.Errorf("upstream charged %v, ledger %v: want equal, %s 2", got, ledger, tc.bucket)
			}
		})
	}
}
