package report

import (
	"context"
	"errors"
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
	// Clock is the house's, required: Keep passes on it.
	Clock ingest.Clock

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
	if r.Clock == nil {
		return nil, errors.New("report: Remembered.Clock is required: the house's clock")
	}
	now := r.Clock.Now()
	if r.kept == nil {
		r.kept = map[string]*keptReads{}
	}
	k := r.kept[quotaKey]
	if k == nil || k.stamp != stamp || now.Sub(k.at) > r.Keep {
		k = &keptReads{stamp: stamp, at: now, last: map[time.Time]map[string]time.Time{},
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
	last, err := keptAt(k.last, since, func(at time.Time) (map[string]time.Time, error) {
		return r.Store.LastPasses(ctx, quotaKey, at)
	})
	if err != nil {
		return nil, err
	}
	out := maps.Clone(last)
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
	costs, err := keptAt(k.costs, since, func(at time.Time) (map[string]map[string]float64, error) {
		return r.Store.PassCosts(ctx, quotaKey, at)
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]float64, len(costs))
	for e, m := range costs {
		out[e] = maps.Clone(m)
	}
	return out, nil
}

// keptAt is what read gives for since rounded down to the minute, read
// once a minute asked and kept in m; a since a minute, the last few kept.
func keptAt[V any](m map[time.Time]V, since time.Time, read func(at time.Time) (V, error)) (V, error) {
	at := since.Truncate(time.Minute)
	if v, ok := m[at]; ok {
		return v, nil
	}
	v, err := read(at)
	if err != nil {
		return v, err
	}
	for _, old := range slices.SortedFunc(maps.Keys(m), time.Time.Compare) {
		if len(m) < 4 {
			break
		}
		delete(m, old)
	}
	m[at] = v
	return v, nil
}
