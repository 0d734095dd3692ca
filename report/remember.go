package report

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// Remembered is a Store whose ledger reads (the calls of a window, the
// last passes and their costs: most of a report's and a plan's work) are
// read once and kept while the ledger's stamp stays the same and for at
// most its keep, for a server that builds the report on each request
// (/api/v1/quota, /quota). The calls are read from the earliest time asked
// and given back, later asks, from what was read; the published plan and
// the runs are read each time (one row each). Safe for concurrent use.
type Remembered struct {
	Store
	// Stamp reads what changes whenever the ledger of quotaKey does: what
	// was read is kept while it answers the same.
	Stamp func(ctx context.Context, quotaKey string) (string, error)
	// Keep bounds how long a read is kept whatever the stamp says: the
	// costs of the last day's passes move with the time alone.
	Keep time.Duration

	mu   sync.Mutex
	kept map[string]*keptReads // by quota key
}

type keptReads struct {
	stamp string
	at    time.Time
	since time.Time // of calls
	calls []ingest.Call
	// the passes' reads, by their since
	last  map[time.Time]map[string]time.Time
	costs map[time.Time]map[string]map[string]float64
}

// reads is quotaKey's kept reads, new ones when its stamp moved or they
// are older than Keep.
func (r *Remembered) reads(ctx context.Context, quotaKey string) (*keptReads, error) {
	stamp, err := r.Stamp(ctx, quotaKey)
	if err != nil {
		return nil, err
	}
	if r.kept == nil {
		r.kept = map[string]*keptReads{}
	}
	k := r.kept[quotaKey]
	if k == nil || k.stamp != stamp || time.Since(k.at) > r.Keep {
		k = &keptReads{stamp: stamp, at: time.Now(), last: map[time.Time]map[string]time.Time{},
			costs: map[time.Time]map[string]map[string]float64{}}
		r.kept[quotaKey] = k
	}
	return k, nil
}

// Calls are quotaKey's calls since since: read once from the earliest
// since asked while the ledger stays the same.
func (r *Remembered) Calls(ctx context.Context, quotaKey string, since time.Time) ([]ingest.Call, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, err := r.reads(ctx, quotaKey)
	if err != nil {
		return nil, err
	}
	if k.calls == nil || since.Before(k.since) {
		calls, err := r.Store.Calls(ctx, quotaKey, since)
		if err != nil {
			return nil, err
		}
		k.calls, k.since = append(make([]ingest.Call, 0, len(calls)), calls...), since
	}
	out := make([]ingest.Call, 0, len(k.calls))
	for _, c := range k.calls {
		if !c.At.Before(since) {
			out = append(out, c)
		}
	}
	return out, nil
}

// LastPasses is each entry's last pass since since, kept by since rounded
// down to the minute.
func (r *Remembered) LastPasses(ctx context.Context, quotaKey string, since time.Time) (map[string]time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, err := r.reads(ctx, quotaKey)
	if err != nil {
		return nil, err
	}
	at := since.Truncate(time.Minute)
	if k.last[at] == nil {
		got, err := r.Store.LastPasses(ctx, quotaKey, at)
		if err != nil {
			return nil, err
		}
		k.last[at] = got
	}
	out := maps.Clone(k.last[at])
	maps.DeleteFunc(out, func(_ string, t time.Time) bool { return t.Before(since) })
	return out, nil
}

// PassCosts are the costs of the passes since since, kept by since
// rounded down to the minute.
func (r *Remembered) PassCosts(ctx context.Context, quotaKey string, since time.Time) (map[string]map[string]float64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, err := r.reads(ctx, quotaKey)
	if err != nil {
		return nil, err
	}
	at := since.Truncate(time.Minute)
	if k.costs[at] == nil {
		got, err := r.Store.PassCosts(ctx, quotaKey, at)
		if err != nil {
			return nil, err
		}
		// one since a minute, the last few kept
		for _, old := range slices.SortedFunc(maps.Keys(k.costs), time.Time.Compare) {
			if len(k.costs) < 4 {
				break
			}
			delete(k.costs, old)
		}
		k.costs[at] = got
	}
	out := make(map[string]map[string]float64, len(k.costs[at]))
	for e, m := range k.costs[at] {
		out[e] = maps.Clone(m)
	}
	return out, nil
}
