package jobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
)

// told is a pacer that allows every run and keeps what it was told each
// run spent, and apart the part outside the pass's own cost.
type told struct {
	mu           sync.Mutex
	units, daily map[string]map[string]int64
}

func (*told) WaitsForRoom(string) bool { return false }

func (p *told) Due(context.Context, string, time.Time) bool { return true }

func (*told) Look(context.Context) {}

func (p *told) Ran(name string, units, daily map[string]int64, _ ingest.RunStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.units[name], p.daily[name] = units, daily
}

// A region's first pass of a day reads its category names besides its
// pages: the daemon and a paced run --once tell the pacer every unit the
// pass spent, and apart the category read, which pacing measures a pass
// without.
func TestPacerIsToldTheCategoryReadApart(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"daemon", "once"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, "")
			drain := make(chan struct{})
			pass := r.pass("GB")
			pass.Drain = drain
			pc := &told{units: map[string]map[string]int64{}, daily: map[string]map[string]int64{}}
			ended := make(chan struct{})
			runner := &jobs.Runner{Clock: clock.System, Passes: []*jobs.Pass{pass}, Locker: r.limiter, Logger: quiet(), Drain: drain,
				Observe: func(e jobs.Entry, _ jobs.Ended, _ time.Duration, _ time.Time) {
					if e.Name == "GB" {
						close(ended)
					}
				}}
			d := &jobs.Daemon{Roster: jobs.Roster{Runner: runner, Every: time.Hour}, Pacer: pc}
			if mode == "daemon" {
				// The start's catch-up runs the chart: its slot passed
				// without a pass.
				done := make(chan error)
				go func() { done <- d.Run(context.Background()) }()
				<-ended
				close(drain)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			} else if _, err := d.Once(context.Background()); err != nil {
				t.Fatal(err)
			}
			pages := int64((r.fake.ChartLength("GB") + 49) / 50)
			pc.mu.Lock()
			defer pc.mu.Unlock()
			if got := pc.units["GB"][ingest.DefaultPool]; got != pages+1 {
				t.Errorf("the pacer was told the pass spent %d units, want its %d pages and the category read", got, pages)
			}
			if got := pc.daily["GB"]; got[ingest.DefaultPool] != 1 || len(got) != 1 {
				t.Errorf("the pacer was told %v outside the pass's cost, want the category read's 1 unit", got)
			}
		})
	}
}
