package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
)

// BackfillShare is what the daemon's plan leaves a backfill until the
// pools' reset, when the operator gives it no share of its own.
type BackfillShare struct {
	Units  int64            // whole pages' units, all pools together; 0: not one page
	Left   map[string]int64 // what the plan leaves in each pool a page draws from
	Window time.Duration    // the longest window of those pools: what Left is over
	Pages  int64
}

// ShareOf is the share the plan leaves for pages costing perPage.
func (f *Freshness) ShareOf(perPage map[string]int64) BackfillShare {
	s := BackfillShare{Units: f.Share(perPage), Left: map[string]int64{}}
	if n := sum(perPage); n > 0 {
		s.Pages = s.Units / n
	}
	for pool, u := range f.Left() {
		if _, ok := perPage[pool]; !ok {
			continue
		}
		s.Left[pool] = int64(math.Floor(u))
		for _, p := range f.Pools {
			if p.Pool == pool {
				s.Window = max(s.Window, p.Window)
			}
		}
	}
	return s
}

// Within is the share cut to the pages one search yields (the upstream
// returns at most that many), so that what the backfill says it takes is
// what it can.
func (s BackfillShare) Within(pages int64) BackfillShare {
	if s.Pages > pages {
		s.Units, s.Pages = s.Units/s.Pages*pages, pages
	}
	return s
}

// Line says what the plan leaves a backfill of region and what it takes.
func (s BackfillShare) Line(region string, perPage map[string]int64) string {
	line := fmt.Sprintf("backfill %s: the daemon's plan leaves %s units of the next %s: ", region, costs.PoolUnits(s.Left),
		ShortDuration(s.Window))
	if s.Units == 0 {
		return line + "not one page's (" + costs.PoolUnits(perPage) + ")"
	}
	return line + fmt.Sprintf("taking at most %d units, %d pages (--max-units gives it a share of its own)", s.Units, s.Pages)
}

// ScheduledStore is a Store that keeps the daemon's schedule.
type ScheduledStore interface {
	Store
	Schedule(ctx context.Context) (ledger.Schedule, bool, error)
}

// PlanShare plans the daemon's recorded schedule as the paced daemon
// does (report's plan, from the limiter's state and this database's
// ledger): what it leaves in each pool until the reset is a backfill's
// share when the operator gives it none. With no recorded schedule the
// plan spends nothing. now is the house clock's.
func PlanShare(ctx context.Context, db ScheduledStore, lim StateReader, costs *ingest.Costs, key string, newPacer NewPacer, now time.Time) (*Freshness, error) {
	src := Sources{DB: NoDB{}, Limiter: lim, Costs: costs, QuotaKey: key, NewPacer: newPacer, Now: now}
	if db != nil {
		src.DB = db
		rec, ok, err := db.Schedule(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			src.Timetable = Recorded(rec)
		}
	}
	return Pace(ctx, src)
}

// Recorded is the timetable a run recorded: whole, or for a record of an
// earlier version, its charts at tier 1 and its period.
func Recorded(rec ledger.Schedule) jobs.Timetable {
	var t jobs.Timetable
	if len(rec.Timetable) > 0 && json.Unmarshal(rec.Timetable, &t) == nil && t.Every > 0 {
		return t
	}
	return jobs.NamedTimetable(rec.Every, rec.Regions)
}

// Shared caps job to its share of what plan leaves (TakeShare) when the
// operator gave it no cap (--max-units) and it has pages left, plan read
// only then; false when the backfill does not start.
func Shared(out io.Writer, job *jobs.Backfill, left int, plan func() (*Freshness, error)) (bool, error) {
	if job.MaxUnits != 0 || left <= 0 {
		return true, nil
	}
	f, err := plan()
	if err != nil {
		return false, err
	}
	return TakeShare(out, job, f, left), nil
}

// TakeShare caps job to the whole pages plan leaves room for, of the
// pages it has left, and says so on out; false when that is not one page,
// and the backfill does not start.
func TakeShare(out io.Writer, job *jobs.Backfill, plan *Freshness, pages int) bool {
	cost, _ := job.PageCost() // checked with the flags
	share := plan.ShareOf(cost).Within(int64(pages))
	line := share.Line(job.Query.Region, cost)
	if share.Units == 0 {
		fmt.Fprintf(out, "%s; nothing was called (give --max-units to take a share anyway)\n", line)
		return false
	}
	job.MaxUnits, job.Share = share.Units, "the share the daemon's plan leaves"
	fmt.Fprintln(out, line)
	return true
}
