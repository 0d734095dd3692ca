package web

// The operator's page and /api/v1/quota: the limiter's report with the
// units of the last days, never a reader's.

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/ingestworks/ingest/report"
)

// QuotaJSON is `ingest report --json` with the units of the last 30 days.
type QuotaJSON struct {
	report.JSON
	Daily []DailyJSON `json:"daily"`
	rep   *report.Report
}

// DailyJSON is a pool's units a day, UTC, oldest first.
type DailyJSON struct {
	Pool  string  `json:"pool"`
	Start string  `json:"start"`
	Units []int64 `json:"units"`
}

// usageDays is how far back the daily usage chart looks.
const usageDays = 30

func (s *Server) quota(ctx context.Context) (QuotaJSON, error) {
	rep, err := s.cfg.Report(ctx)
	if err != nil {
		return QuotaJSON{}, err
	}
	q := QuotaJSON{JSON: rep.JSON(), Daily: []DailyJSON{}, rep: rep}
	start := rep.Now.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-usageDays)
	daily, err := s.daily.units(ctx, s.cfg.Usage, s.cfg.QuotaKey, start, s.cfg.Clock.Now())
	if err != nil {
		return QuotaJSON{}, err
	}
	for _, p := range rep.Pools {
		units := daily[p.Pool]
		if units == nil {
			units = make([]int64, usageDays)
		}
		q.Daily = append(q.Daily, DailyJSON{Pool: p.Pool, Start: start.Format(time.RFC3339), Units: units})
	}
	return q, nil
}

func (s *Server) apiQuota(w http.ResponseWriter, r *http.Request) {
	q, err := s.quota(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	replyJSON(w, http.StatusOK, q)
}

type overviewView struct {
	Title   string
	Quota   QuotaJSON
	Pools   []report.Pool
	Hourly  []usageRow
	Daily   []usageRow
	Regions []report.Region
	Pace    *report.Freshness // nil: no schedule
	Now     time.Time
	Reset   time.Time
}

// usageRow is one pool's usage over a span: its bars, or, when it spent
// nothing, one quiet line saying so.
type usageRow struct {
	Pool  string
	Chart *BarChart
	Empty string
}

func usage(pool, span string, units []int64, start time.Time, label func(start time.Time, i int) string) usageRow {
	var total int64
	for _, u := range units {
		total += u
	}
	if total == 0 {
		return usageRow{Pool: pool, Empty: "no " + pool + " calls in " + span}
	}
	c := bars(pool, units, func(i int) string { return label(start, i) })
	return usageRow{Pool: pool, Chart: &c}
}

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) {
	q, err := s.quota(r.Context())
	if err != nil {
		s.pageFail(w, r, err)
		return
	}
	v := overviewView{Title: "Operator", Quota: q, Pools: q.rep.Pools, Regions: q.rep.Regions, Pace: q.rep.Freshness, Now: q.rep.Now, Reset: q.rep.UpstreamReset}
	hourly := map[string]report.HourlyJSON{}
	for _, h := range q.Hourly {
		hourly[h.Pool] = h
	}
	daily := map[string]DailyJSON{}
	for _, d := range q.Daily {
		daily[d.Pool] = d
	}
	// Every pool, in the pools' order, the same way in both spans.
	for _, p := range q.rep.Pools {
		h := hourly[p.Pool]
		start, _ := time.Parse(time.RFC3339, h.Start)
		v.Hourly = append(v.Hourly, usage(p.Pool, "24 hours", h.Units, start, func(start time.Time, i int) string {
			return start.Add(time.Duration(i) * time.Hour).Format("Jan 2 15:00")
		}))
		d := daily[p.Pool]
		start, _ = time.Parse(time.RFC3339, d.Start)
		v.Daily = append(v.Daily, usage(p.Pool, "30 days", d.Units, start, func(start time.Time, i int) string {
			return start.AddDate(0, 0, i).Format("Jan 2")
		}))
	}
	s.render(w, r, http.StatusOK, "operator", v)
}

// Usage is what the operator's usage charts read of the quota's ledger:
// each pool's units a day over days days from since.
type Usage interface {
	DailyUnits(ctx context.Context, quotaKey string, since time.Time, days int) (map[string][]int64, error)
}

// dailyCache keeps the units of the days before today: they are most of a
// 30-day chart's reading (a month of ledger) and do not change once the
// day is over, but for a late write, which dailyTTL bounds. Today's units
// are read on every request.
type dailyCache struct {
	mu     sync.Mutex
	key    string
	at     time.Time
	cached map[string][]int64
}

const dailyTTL = 10 * time.Minute

// units returns usageDays of daily units from start, the last one today,
// read at now.
func (c *dailyCache) units(ctx context.Context, db Usage, quotaKey string, start, now time.Time) (map[string][]int64, error) {
	if db == nil {
		return map[string][]int64{}, nil
	}
	past, err := c.past(ctx, db, quotaKey, start, now)
	if err != nil {
		return nil, err
	}
	today, err := db.DailyUnits(ctx, quotaKey, start.AddDate(0, 0, usageDays-1), 1)
	if err != nil {
		return nil, err
	}
	out := map[string][]int64{}
	for pool, u := range past {
		out[pool] = append(make([]int64, 0, usageDays), u...)
		out[pool] = append(out[pool], 0)
	}
	for pool, u := range today {
		if out[pool] == nil {
			out[pool] = make([]int64, usageDays)
		}
		out[pool][usageDays-1] = u[0]
	}
	return out, nil
}

func (c *dailyCache) past(ctx context.Context, db Usage, quotaKey string, start, now time.Time) (map[string][]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := quotaKey + "@" + start.Format(time.DateOnly)
	if c.key == key && now.Sub(c.at) < dailyTTL {
		return c.cached, nil
	}
	u, err := db.DailyUnits(ctx, quotaKey, start, usageDays-1)
	if err != nil {
		return nil, err
	}
	c.key, c.at, c.cached = key, now, u
	return u, nil
}
