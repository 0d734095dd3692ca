package jobs

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// Timetable is the schedule of charts as --regions, --categories, --every
// and --max-stale give it, read once: the passes the daemon runs, their
// names, their staggered slots and the entries pacing plans are all made
// of it, so that the run, its record in the database and every view of
// the plan say the same schedule.
type Timetable struct {
	// Charts are the selected regions, each with its tier and depth, in
	// schedule order.
	Charts []regions.Chart
	// Categories are the charts kept of each region: "" the unfiltered
	// chart, then the videoCategoryIds of --categories. None is "" alone.
	Categories []string
	Every      time.Duration
	// MaxStale is how stale a region's own chart may grow when the pools
	// are short before the plan drops it; pace.DefaultBound when zero.
	MaxStale time.Duration
}

// RefreshEvery is how often the refresh of kept videos runs on t: its
// period when that is known (the daemon's, or run --once's when --every
// says cron's); zero when it is not, and each run then fetches every
// video due.
func (t Timetable) RefreshEvery(known bool) time.Duration {
	if !known {
		return 0
	}
	return t.Every
}

// categories are the timetable's categories, the unfiltered chart alone
// when it names none.
func (t Timetable) categories() []string {
	if len(t.Categories) == 0 {
		return []string{""}
	}
	return t.Categories
}

// Passes are the chart passes of the timetable, each like like, in the
// order they are staggered: every category of a region after its own
// chart.
func (t Timetable) Passes(like Pass, log *slog.Logger) []*Pass {
	return ChartPasses(t.Charts, t.categories(), like, log)
}

// Names names the timetable's charts in schedule order: US, US/10, GB...
func (t Timetable) Names() []string { return ChartNames(t.Charts, t.categories()) }

// Regions are the timetable's region codes, in schedule order.
func (t Timetable) Regions() []string { return regions.Codes(t.Charts) }

// Region is the chart's region (the code before any "/category") as the
// timetable selects it; tier 1 and the whole chart when it is not in it.
func (t Timetable) Region(chart string) regions.Chart {
	code, _, _ := strings.Cut(chart, "/")
	for _, c := range t.Charts {
		if c.Code == code {
			return c
		}
	}
	return regions.Charts(code)[0]
}

// Entries are the timetable's chart entries (without their runs), each at
// its staggered slots, as the daemon schedules them.
func (t Timetable) Entries() ([]Entry, error) {
	names := t.Names()
	var out []Entry
	for i, name := range names {
		c := t.Region(name)
		e := Entry{Name: name, Kind: ChartKind(name), Tier: c.Tier, Pages: c.Pages()}
		var err error
		if e.Slots, err = chartSlots(c, t.Every, i, len(names)); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// chartSlots are the staggered slots of the i-th of n charts, of region c.
func chartSlots(c regions.Chart, every time.Duration, i, n int) (Schedule, error) {
	s, err := c.Stagger(every, i, n)
	if err != nil {
		return Schedule{}, fmt.Errorf("--every: %w", err)
	}
	return s, nil
}

// Next is when the chart named runs next after now at its staggered
// slot; zero when the timetable does not run it.
func (t Timetable) Next(chart string, now time.Time) time.Time {
	names := t.Names()
	for i, name := range names {
		if name == chart {
			if s, err := chartSlots(t.Region(name), t.Every, i, len(names)); err == nil {
				return s.Next(now)
			}
		}
	}
	return time.Time{}
}

// Nexts is each of the timetable's charts' next slot after now, in the
// order of Names: Next of every chart, the names made once.
func (t Timetable) Nexts(now time.Time) []time.Time {
	names := t.Names()
	out := make([]time.Time, len(names))
	for i, name := range names {
		if s, err := chartSlots(t.Region(name), t.Every, i, len(names)); err == nil {
			out[i] = s.Next(now)
		}
	}
	return out
}

// PaceEntries are the entries pacing plans, one for each of entries that
// spends quota (pruning spends none): each at its kind's priority, its
// tier, never more often than its slots, at what its run costs until one
// is measured. The daemon's pacer and every plan made for a reader come
// from here.
func PaceEntries(entries []Entry, costs *ingest.Costs) []pace.Entry {
	var out []pace.Entry
	for _, e := range entries {
		cost := e.Guess(costs)
		if cost == nil {
			continue
		}
		pe := pace.Entry{Name: e.Name, Priority: int(e.Kind), Tier: e.Tier, Cost: cost}
		if e.Slots.Every > 0 {
			pe.Floor, pe.Slots = e.Slots.Every, e.Slots
		}
		out = append(out, pe)
	}
	return out
}

// timetableDoc is a timetable as the database records it.
type timetableDoc struct {
	EveryMS    int64      `json:"every_ms"`
	MaxStaleMS int64      `json:"max_stale_ms"`
	Charts     []chartDoc `json:"charts"`
	Categories []string   `json:"categories"`
}

type chartDoc struct {
	Code  string `json:"code"`
	Tier  int    `json:"tier"`
	Depth int    `json:"depth"`
}

// MarshalJSON is the timetable as the database records it.
func (t Timetable) MarshalJSON() ([]byte, error) {
	d := timetableDoc{EveryMS: t.Every.Milliseconds(), MaxStaleMS: t.MaxStale.Milliseconds(), Categories: t.categories(),
		Charts: []chartDoc{}}
	for _, c := range t.Charts {
		d.Charts = append(d.Charts, chartDoc{Code: c.Code, Tier: c.Tier, Depth: c.Depth})
	}
	return json.Marshal(d)
}

// UnmarshalJSON reads a recorded timetable.
func (t *Timetable) UnmarshalJSON(b []byte) error {
	var d timetableDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return err
	}
	*t = Timetable{Every: time.Duration(d.EveryMS) * time.Millisecond, MaxStale: time.Duration(d.MaxStaleMS) * time.Millisecond,
		Categories: d.Categories}
	for _, c := range d.Charts {
		t.Charts = append(t.Charts, regions.Chart{Code: c.Code, Tier: max(c.Tier, 1), Depth: c.Depth})
	}
	return nil
}

// NamedTimetable is the timetable of charts named (US, US/10, as earlier
// versions recorded them), every region at tier 1 and read whole, run
// every every.
func NamedTimetable(every time.Duration, charts []string) Timetable {
	t := Timetable{Every: every}
	seen := map[string]bool{}
	cats := map[string]bool{}
	for _, name := range charts {
		code, cat, _ := strings.Cut(name, "/")
		if !seen[code] {
			seen[code] = true
			t.Charts = append(t.Charts, regions.Charts(code)...)
		}
		if !cats[cat] {
			cats[cat] = true
			t.Categories = append(t.Categories, cat)
		}
	}
	if len(t.Categories) > 0 && t.Categories[0] != "" {
		t.Categories = append([]string{""}, t.Categories...)
	}
	return t
}
