package quota

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

// dayArg is a pool's four day starts as window.lua reads them in a spend,
// "d1,d2,d3,d4" ("0" for a pool without a day), with the day it was made
// in: the same string serves every decision until that day ends, so it is
// built once a day rather than on every decision.
type dayArg struct {
	from, to int64 // the day it holds, [from, to) in ms
	s        string
}

// dayArgs caches one dayArg per pool; safe for concurrent use.
type dayArgs map[string]*atomic.Pointer[dayArg]

func newDayArgs(costs *ingest.Costs) dayArgs {
	m := dayArgs{}
	for _, p := range costs.Pools {
		m[p.Name] = new(atomic.Pointer[dayArg])
	}
	return m
}

// day returns pool p's day starts around t: the cached ones while t is in
// their day (the same pointer, which is how a spend's profile knows its
// day starts still hold), else new ones.
func (m dayArgs) day(p ingest.Pool, t time.Time) *dayArg {
	ms := t.UnixMilli()
	slot := m[p.Name]
	if slot != nil {
		if a := slot.Load(); a != nil && ms >= a.from && ms < a.to {
			return a
		}
	}
	a := makeDayArg(p, t)
	if slot != nil {
		slot.Store(a)
	}
	return a
}

func makeDayArg(p ingest.Pool, t time.Time) *dayArg {
	d := days(p, t)
	a := &dayArg{from: 0, to: 1 << 62, s: "0"}
	if d[0] != 0 {
		a = &dayArg{from: d[1], to: d[2], s: fmt.Sprintf("%d,%d,%d,%d", d[0], d[1], d[2], d[3])}
	}
	return a
}
