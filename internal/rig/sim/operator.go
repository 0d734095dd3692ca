package sim

// The operator's side of the site: what /api/v1/quota says of each chart's
// last run, each pool's window and each day's units, read as an operator
// reads it, and `ingest report` read on the host before the daemon made
// its database. The checker holds both to the upstream's own charges
// (check_operator.go).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/wiring"
)

// OperatorRead is one answer of /api/v1/quota: when it was asked and
// answered, each chart's last run with its units, each pool's used units
// in its window, and each pool's units a UTC day (the last one today's,
// so far).
type OperatorRead struct {
	At, Answered time.Time
	Err          string
	Down         bool // the process was down at the read's start or end: no answer is due
	Last         []LastRun
	Used         map[string]int64 // by pool; absent when the limiter did not answer
	Daily        map[string][]int64
	DailyFrom    time.Time   // the first day of Daily
	Runs         []ListedRun // /api/v1/runs' newest chart runs, as listed
	// Names are the regions' names as listed, by code ("" for none)
	Names map[string]string
	// Free is each pool's free_at as the limiter answered it (zero for
	// null), absent as Used is
	Free map[string]time.Time
	// Plan is the daemon's published plan as the answer's pace says it;
	// nil when the answer has none the daemon published
	// (check_track_cost.go).
	Plan *PlanSaid
}

// PlanSaid is a published plan as /api/v1/quota says it: when the daemon
// made it, and by pool what every entry at its floor would spend by the
// pool's reset, and when that is; each entry's floor, by name.
type PlanSaid struct {
	At    time.Time
	Fixed map[string]int64
	Reset map[string]time.Time
	Floor map[string]time.Duration
}

// ListedRun is a chart run as /api/v1/runs lists it: Finished zero while
// it runs.
type ListedRun struct {
	ID                int64
	Chart             string
	Status            ingest.RunStatus
	Started, Finished time.Time
	Pages             int
}

// runsListed is how many of the newest chart runs the operator reads.
const runsListed = 50

// LastRun is a chart's last run as the report names it: the chart, when
// the run started (to the second) and the units its calls took.
type LastRun struct {
	Chart   string
	Started time.Time
	Units   int64
}

// operatorLook is how soon after a life of the process starts the
// operator looks at its quota, at most: while the first pass of each chart
// is still its last, before its next slot.
const operatorLook = 20 * time.Minute

// operatorEvery is about how often the operator looks besides: a few
// times a day, so that each day's units are read after the day ends.
const operatorEvery = 3 * time.Hour

// operator asks /api/v1/quota a few minutes into each life of the process
// and about every operatorEvery besides, each time drawn from the seed,
// until ctx ends; then it returns what it read.
func operator(ctx context.Context, seed uint64, net *pipes, up func() bool) []OperatorRead {
	rng := rand.New(rand.NewPCG(seed, 0x0be7a))
	client := &http.Client{Transport: &http.Transport{DialContext: net.dial, DisableKeepAlives: true}}
	var out []OperatorRead
	seen := 0 // the life looked at
	for {
		wait := time.Minute + time.Duration(rng.Int64N(int64(operatorLook)))
		if net.life() == seen {
			wait = operatorEvery/2 + time.Duration(rng.Int64N(int64(operatorEvery)))
		}
		select {
		case <-ctx.Done():
			return out
		case <-time.After(wait):
		case <-net.started:
			continue // a new life: a look within operatorLook of its start
		}
		was := up()
		life := net.life()
		r := readQuota(ctx, client)
		r.Down = !was || !up() || net.life() != life
		if ctx.Err() != nil {
			return out
		}
		seen = life
		out = append(out, r)
	}
}

// readQuota is one read of /api/v1/quota, and of /api/v1/runs after it.
func readQuota(ctx context.Context, client *http.Client) (r OperatorRead) {
	r = OperatorRead{At: time.Now()}
	defer func() { r.Answered = time.Now() }()
	body, err := get(ctx, client, "/api/v1/quota")
	if err != nil {
		r.Err = err.Error()
		return r
	}
	var q struct {
		BackendOK bool `json:"backend_ok"`
		Pools     []struct {
			Name      string  `json:"name"`
			Used      int64   `json:"used"`
			WaitUntil *string `json:"wait_until"`
			FreeAt    *string `json:"free_at"`
		} `json:"pools"`
		Regions []struct {
			Code    string  `json:"code"`
			Name    string  `json:"name"`
			LastRun *string `json:"last_run"`
			Units   int64   `json:"units"`
		} `json:"regions"`
		Daily []struct {
			Pool  string  `json:"pool"`
			Start string  `json:"start"`
			Units []int64 `json:"units"`
		} `json:"daily"`
		Pace *paceSaid `json:"pace"`
	}
	if err := json.Unmarshal(body, &q); err != nil {
		r.Err = fmt.Sprintf("/api/v1/quota: %v", err)
		return r
	}
	if r.Plan, err = q.Pace.plan(); err != nil {
		r.Err = fmt.Sprintf("/api/v1/quota: pace: %v", err)
		return r
	}
	if q.BackendOK {
		r.Used, r.Free = map[string]int64{}, map[string]time.Time{}
		for _, p := range q.Pools {
			if p.WaitUntil != nil { // a limiter recovering from a loss counts what it refilled
				continue
			}
			r.Used[p.Name] = p.Used
			if r.Free[p.Name], err = stampOrZero(p.FreeAt); err != nil {
				r.Err = fmt.Sprintf("/api/v1/quota: pools %s: free_at: %v", p.Name, err)
				return r
			}
		}
	}
	r.Names = map[string]string{}
	for _, g := range q.Regions {
		r.Names[g.Code] = g.Name
		if g.LastRun == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339, *g.LastRun)
		if err != nil {
			r.Err = fmt.Sprintf("/api/v1/quota: regions %s: last_run: %v", g.Code, err)
			return r
		}
		r.Last = append(r.Last, LastRun{Chart: g.Code, Started: at, Units: g.Units})
	}
	r.Daily = map[string][]int64{}
	for _, d := range q.Daily {
		from, err := time.Parse(time.RFC3339, d.Start)
		if err != nil {
			r.Err = fmt.Sprintf("/api/v1/quota: daily %s: start: %v", d.Pool, err)
			return r
		}
		r.DailyFrom, r.Daily[d.Pool] = from, d.Units
	}
	r.Runs, err = listRuns(ctx, client)
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// paceSaid is the answer's pace, as much of it as PlanSaid reads.
type paceSaid struct {
	Source string  `json:"source"`
	MadeAt *string `json:"made_at"`
	Pools  []struct {
		Pool  string `json:"pool"`
		Reset string `json:"reset"`
		Fixed int64  `json:"fixed_units"`
	} `json:"pools"`
	Charts []struct {
		Chart string  `json:"chart"`
		Floor float64 `json:"floor_seconds"`
	} `json:"charts"`
}

// plan is the plan p says, nil when it is none the daemon published.
func (p *paceSaid) plan() (*PlanSaid, error) {
	if p == nil || p.Source != "published" || p.MadeAt == nil {
		return nil, nil
	}
	at, err := time.Parse(time.RFC3339, *p.MadeAt)
	if err != nil {
		return nil, fmt.Errorf("made_at: %w", err)
	}
	out := &PlanSaid{At: at, Fixed: map[string]int64{}, Reset: map[string]time.Time{}, Floor: map[string]time.Duration{}}
	for _, l := range p.Pools {
		if out.Reset[l.Pool], err = time.Parse(time.RFC3339, l.Reset); err != nil {
			return nil, fmt.Errorf("pools %s: reset: %w", l.Pool, err)
		}
		out.Fixed[l.Pool] = l.Fixed
	}
	for _, c := range p.Charts {
		out.Floor[c.Chart] = time.Duration(c.Floor * float64(time.Second))
	}
	return out, nil
}

// stampOrZero is an RFC 3339 time, zero for null.
func stampOrZero(s *string) (time.Time, error) {
	if s == nil {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339, *s)
}

// listRuns reads the newest chart runs on /api/v1/runs.
func listRuns(ctx context.Context, client *http.Client) ([]ListedRun, error) {
	body, err := get(ctx, client, fmt.Sprintf("/api/v1/runs?kind=trending&limit=%d", runsListed))
	if err != nil {
		return nil, err
	}
	var list struct {
		Runs []struct {
			ID       int64            `json:"id"`
			Region   string           `json:"region"`
			Category string           `json:"category"`
			Status   ingest.RunStatus `json:"status"`
			Started  *string          `json:"started"`
			Finished *string          `json:"finished"`
			Pages    int              `json:"pages"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("/api/v1/runs: %w", err)
	}
	out := []ListedRun{}
	for _, l := range list.Runs {
		r := ListedRun{ID: l.ID, Chart: chartName(l.Region, l.Category), Status: l.Status, Pages: l.Pages}
		for _, t := range []struct {
			s  *string
			to *time.Time
		}{{l.Started, &r.Started}, {l.Finished, &r.Finished}} {
			if t.s == nil {
				continue
			}
			if *t.to, err = time.Parse(time.RFC3339, *t.s); err != nil {
				return nil, fmt.Errorf("/api/v1/runs: run %d: %w", l.ID, err)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Before is `ingest report` asked on the host before the daemon's first
// start, where no database is yet: its error ("" for none), whether it
// said a database was there, each region's status, and whether a file
// stood at the database's path after it.
type Before struct {
	Asked    bool
	Err      string
	Database bool
	Statuses map[string]ingest.RunStatus
	Created  bool
}

// reportBefore reads the quota as `ingest report --json` does, through
// wiring, on the host where the daemon is about to make its database:
// read-only, it goes on without one (docs/contract.md).
func reportBefore(dsn string, s Shape, log *slog.Logger) Before {
	rep, err := readReport(context.Background(), dsn, s, log)
	b := Before{Asked: true, Statuses: map[string]ingest.RunStatus{}}
	if err != nil {
		b.Err = err.Error()
	} else {
		j := rep.JSON()
		b.Database = j.Database
		for _, g := range j.Regions {
			b.Statuses[g.Code] = g.Status
		}
	}
	if _, err := os.Stat(dsn); !errors.Is(err, os.ErrNotExist) {
		b.Created = true
	}
	return b
}

// readReport is cmd/ingest's report: the database if any, the schedule it
// recorded else the flags' (none given), the quota key of the API key,
// the limiter read-only.
func readReport(ctx context.Context, dsn string, s Shape, log *slog.Logger) (*report.Report, error) {
	h := &wiring.Host{DSN: dsn, RedisURL: s.Redis, RedisHook: s.RedisHook, Costs: s.Costs, Logger: log, Clock: clock.System}
	sch := wiring.Schedule{Timetable: jobs.Timetable{Every: time.Hour}}
	src := report.Sources{DB: report.NoDB{}, Costs: s.Costs, Timetable: sch.Timetable, ScheduleFrom: "default",
		Standing: ingest.StandardStanding()}
	db, err := h.OpenIfAny(ctx)
	if err != nil {
		return nil, err
	}
	if db == nil {
		src.NoDatabase = true
	} else {
		defer db.Close()
		src.DB, src.Size, src.Held = db, db.Size, wiring.HeldIn(db)
	}
	if err := wiring.Follow(ctx, sch, db, &src); err != nil {
		return nil, err
	}
	if src.QuotaKey, err = h.ReadQuotaKey(ctx, "", Key, db); err != nil {
		return nil, err
	}
	l, closeLimiter, err := h.ReadLimiter(db, src.QuotaKey, src.Costs)
	if err != nil {
		return nil, err
	}
	defer closeLimiter()
	src.Limiter, src.Now = l, time.Now()
	return wiring.BuildReport(ctx, src)
}
