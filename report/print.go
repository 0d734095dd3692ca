package report

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/store"
)

// JSON is `ingest report --json`; docs/contract.md fixes the fields scripts
// rely on, the rest are additions.
type JSON struct {
	QuotaKey     string     `json:"quota_key"`
	Backend      string     `json:"backend"`
	BackendOK    bool       `json:"backend_ok"`
	BackendError string     `json:"backend_error,omitempty"`
	UsedFrom     string     `json:"used_from"` // limiter, or ledger when it did not answer
	Database     bool       `json:"database"`  // false: no database on this host yet
	Schedule     string     `json:"schedule"`  // where the plan's period came from
	Pools        []PoolJSON `json:"pools"`
	Operations   []OpJSON   `json:"operations"`
	ByRegion     []OpJSON   `json:"by_region"`
	// ByClient and LeftToClients: the proxy's clients, when any spent
	// within the day (clients.go).
	ByClient      []OpJSON         `json:"by_client,omitempty"`
	LeftToClients map[string]int64 `json:"left_to_clients,omitempty"`
	// LeftByPriority: left_to_clients for each later priority's clients,
	// by priority, when the plans are known.
	LeftByPriority map[int64]map[string]int64 `json:"left_to_clients_by_priority,omitempty"`
	Regions        []RegionJSON               `json:"regions"`
	UpstreamReset  string                     `json:"upstream_reset"`
	Plan           []PlanJSON                 `json:"plan"`
	Tiers          []TierJSON                 `json:"tiers"`
	Hourly         []HourlyJSON               `json:"hourly"`
	Storage        *StorageJSON               `json:"storage,omitempty"`
	UpstreamClock  *ClockJSON                 `json:"upstream_clock"` // clock.go
	Pace           *FreshnessJSON             `json:"pace"`           // pace.go; null: no schedule
	Terms          *TermsJSON                 `json:"terms"`          // terms.go
	// LimiterUndecided: the limiter cannot tell a new Redis from a wiped
	// one, and names the command for each case.
	LimiterUndecided string `json:"limiter_undecided,omitempty"`
	// CostsNote: the command's costs are not the ones the schedule's run
	// spends by, whose pools and plan are shown.
	CostsNote string `json:"costs_note,omitempty"`
}

// StorageJSON is the database's size and how far back it reaches.
type StorageJSON struct {
	Bytes     int64   `json:"bytes"`
	FreeBytes int64   `json:"free_bytes"`
	Shrinks   bool    `json:"shrinks"` // incremental vacuum: pruning gives space back
	OldestRun *string `json:"oldest_run"`
}

// PoolJSON is part of JSON.
type PoolJSON struct {
	Name         string  `json:"name"`
	Limit        int64   `json:"limit"`
	Reserve      int64   `json:"reserve"`
	Window       string  `json:"window"`
	Used         int64   `json:"used"`
	Day          *string `json:"day"`        // the pool's day zone, null for none
	UsedToday    int64   `json:"used_today"` // in the current calendar day of that zone
	Remaining    int64   `json:"remaining"`
	FreeAt       *string `json:"free_at"`
	BlockedUntil *string `json:"blocked_until"`
	WaitUntil    *string `json:"wait_until"`       // recovering from a data loss
	Unmetered    int64   `json:"unmetered"`        // units taken unmetered in the window: the fail_open budget used
	FailOpen     int64   `json:"fail_open_budget"` // 0: the pool is closed while the limiter is unreachable
}

// OpJSON is part of JSON.
type OpJSON struct {
	Op     string           `json:"op,omitempty"`
	Region string           `json:"region,omitempty"`
	Client string           `json:"client,omitempty"`
	Calls  int              `json:"calls"`
	Units  int64            `json:"units"` // all pools together
	Pools  map[string]int64 `json:"pools"`
}

// RegionJSON is part of JSON.
type RegionJSON struct {
	Code    string           `json:"code"`
	Name    string           `json:"name,omitempty"`
	Status  ingest.RunStatus `json:"status"`
	LastRun *string          `json:"last_run"`
	Pages   int              `json:"pages"`
	Videos  int              `json:"videos"`
	Units   int64            `json:"units"`
	NextRun *string          `json:"next_run"`
	RetryAt *string          `json:"retry_at,omitempty"`
	Message string           `json:"message,omitempty"`
}

// PlanJSON is part of JSON.
type PlanJSON struct {
	Pool       string  `json:"pool"`
	Regions    int     `json:"regions"`
	Pages      int     `json:"pages_per_cycle"`
	RunsPerDay float64 `json:"runs_per_day"`
	Units      int64   `json:"units_per_day"`
	Capacity   int64   `json:"capacity"`
	Fits       bool    `json:"fits"`
}

// TierJSON is part of JSON: what a tier of the schedule's regions gets
// from the plan. Stretch is how many times its cadence the slowest of its
// charts runs (1: held at it; 0: none runs); Unheld says what the pool
// cannot hold of it, "" when it holds the tier at its cadence.
type TierJSON struct {
	Tier        int      `json:"tier"`
	Regions     int      `json:"regions"`
	Cadence     string   `json:"cadence"`
	Every       string   `json:"every"`
	Stretch     float64  `json:"times_its_cadence"`
	UnitsPerDay int64    `json:"units_per_day"`
	Dropped     []string `json:"dropped"`
	Unheld      string   `json:"unheld,omitempty"`
}

// HourlyJSON is part of JSON.
type HourlyJSON struct {
	Pool  string  `json:"pool"`
	Start string  `json:"start"` // the first hour; one value an hour, oldest first
	Units []int64 `json:"units"`
}

// Stamp is t in RFC 3339, UTC; nil for the zero time.
func Stamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// JSON returns the report as `--json` prints it.
func (r *Report) JSON() JSON {
	j := JSON{QuotaKey: r.QuotaKey, Backend: r.Backend, BackendOK: r.BackendErr == nil, UsedFrom: "limiter",
		Database: !r.NoDatabase, Schedule: r.ScheduleFrom,
		UpstreamReset: r.UpstreamReset.UTC().Format(time.RFC3339),
		Pools:         []PoolJSON{}, Operations: []OpJSON{}, ByRegion: []OpJSON{}, Regions: []RegionJSON{},
		Plan: []PlanJSON{}, Tiers: []TierJSON{}, Hourly: []HourlyJSON{}}
	j.UpstreamClock, j.Pace, j.Terms = r.clockJSON(), r.freshnessJSON(), r.termsJSON()
	j.LimiterUndecided, j.CostsNote = r.Undecided, r.CostsNote
	if r.BackendErr != nil {
		j.BackendError, j.UsedFrom = r.BackendErr.Error(), "ledger"
	}
	if st := r.Storage; st != nil {
		j.Storage = &StorageJSON{Bytes: st.Bytes, FreeBytes: st.FreeBytes, Shrinks: st.Incremental, OldestRun: Stamp(st.OldestRun)}
	}
	for _, p := range r.Pools {
		var day *string
		if p.Day != "" {
			day = &p.Day
		}
		j.Pools = append(j.Pools, PoolJSON{Name: p.Pool, Limit: p.Limit, Reserve: p.Reserve, Window: ShortDuration(p.Window),
			Used: p.Used, Day: day, UsedToday: p.UsedDay, Remaining: p.Remaining, FreeAt: Stamp(p.FreeAt),
			BlockedUntil: Stamp(p.BlockedUntil), WaitUntil: Stamp(p.WaitUntil), Unmetered: p.Unmetered, FailOpen: p.FailOpen.Budget})
	}
	for _, o := range r.Operations {
		j.Operations = append(j.Operations, OpJSON{Op: o.Op, Calls: o.Calls, Units: sum(o.Units), Pools: o.Units})
	}
	for _, g := range r.ByRegion {
		j.ByRegion = append(j.ByRegion, OpJSON{Region: g.Region, Calls: g.Calls, Units: sum(g.Units), Pools: g.Units})
	}
	for _, g := range r.ByClient {
		j.ByClient = append(j.ByClient, OpJSON{Client: g.Client, Calls: g.Calls, Units: sum(g.Units), Pools: g.Units})
	}
	j.LeftToClients, j.LeftByPriority = r.LeftToClients, r.LeftByPriority
	for _, g := range r.Regions {
		j.Regions = append(j.Regions, RegionJSON{Code: g.Code, Name: g.Name, Status: g.Status, LastRun: Stamp(g.LastRun),
			Pages: g.Pages, Videos: g.Videos, Units: g.Units, NextRun: Stamp(g.NextRun), RetryAt: Stamp(g.RetryAt),
			Message: g.Message})
	}
	for _, p := range r.Plan {
		j.Plan = append(j.Plan, PlanJSON{Pool: p.Pool, Regions: p.Regions, Pages: p.Pages, RunsPerDay: p.RunsPerDay,
			Units: p.Units, Capacity: p.Capacity, Fits: p.Fits()})
	}
	for _, t := range r.Tiers {
		j.Tiers = append(j.Tiers, TierJSON{Tier: t.Tier, Regions: t.Regions, Cadence: ShortDuration(t.Cadence),
			Every: cadence(t.Every, t.Slowest), Stretch: t.Stretch(), UnitsPerDay: int64(math.Round(t.Units)),
			Dropped: append([]string{}, t.Dropped...), Unheld: t.Unheld()})
	}
	for _, pool := range r.hourlyPools() {
		row := r.Hourly[pool]
		j.Hourly = append(j.Hourly, HourlyJSON{Pool: pool, Start: r.HourStart.UTC().Format(time.RFC3339), Units: row[:]})
	}
	return j
}

func (r *Report) hourlyPools() []string {
	var pools []string
	for p := range r.Hourly {
		pools = append(pools, p)
	}
	sort.Strings(pools)
	return pools
}

// Text prints the report for people; times in loc beside UTC where it
// matters.
func (r *Report) Text(out io.Writer, loc *time.Location) {
	backend := r.Backend + " (answering)"
	switch {
	case r.Whole:
		backend = "embedded in the database, which is not there yet (every pool whole)"
	case r.BackendErr != nil:
		backend = fmt.Sprintf("%s (NOT ANSWERING: %v; used units below come from the ledger)", r.Backend, r.BackendErr)
	}
	fmt.Fprintf(out, "Quota key %s, limiter %s\n", r.QuotaKey, backend)
	if r.NoDatabase {
		fmt.Fprintln(out, "No database on this host yet: no runs, no ledger; the pools are the limiter's")
	}
	if r.CostsNote != "" {
		fmt.Fprintln(out, "Costs: "+r.CostsNote)
	}
	fmt.Fprintf(out, "Upstream resets at %s (%s local)\n", r.UpstreamReset.UTC().Format("2006-01-02 15:04 MST"),
		r.UpstreamReset.In(loc).Format("2006-01-02 15:04 MST"))
	r.textClock(out)
	if st := r.Storage; st != nil {
		fmt.Fprintln(out, storageText(*st))
	}
	r.textTerms(out)
	fmt.Fprintln(out)
	r.textPools(out)
	r.textPlan(out)
	r.textFreshness(out)
	r.textRegions(out, loc)
	r.textBreakdowns(out)
	r.textChart(out)
}

func tw(out io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(out, 0, 0, 2, ' ', 0) }

func orDash(t time.Time, layout string, loc *time.Location) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(loc).Format(layout)
}

func (r *Report) textPools(out io.Writer) {
	w := tw(out)
	fmt.Fprintln(w, "POOL\tLIMIT\tRESERVE\tUSED (WINDOW)\tUSED TODAY\tREMAINING\tFREE AT\tBLOCKED UNTIL\tUNMETERED")

	flagged, waiting := false, false
	for _, p := range r.Pools {
		un := "-"
		if p.Unmetered > 0 {
			un, flagged = fmt.Sprintf("%d of %d (!)", p.Unmetered, p.FailOpen.Budget), true
		}
		today := "-"
		if p.Day != "" {
			today = fmt.Sprintf("%d", p.UsedDay)
		}
		blocked := orDash(p.BlockedUntil, time.RFC3339, time.UTC)
		if !p.WaitUntil.IsZero() {
			blocked, waiting = "recovering to "+p.WaitUntil.UTC().Format(time.RFC3339), true
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d in %s\t%s\t%d\t%s\t%s\t%s\n", p.Pool, p.Limit, p.Reserve, p.Used, ShortDuration(p.Window),
			today, p.Remaining, orDash(p.FreeAt, time.RFC3339, time.UTC), blocked, un)
	}
	w.Flush()
	if flagged {
		fmt.Fprintln(out, "(!) units admitted unmetered while the limiter could not be reached, of the pool's fail_open budget")
		fmt.Fprintln(out, "    over its window: in the ledger, and written into the limiter's window when it answers again")
	}
	switch {
	case r.Undecided != "":
		fmt.Fprintln(out, "The limiter waits: "+r.Undecided+".")
	case waiting:
		fmt.Fprintln(out, "The limiter lost data and admits nothing metered until every ledger (database) that spent has put its calls back; `ingest quota show` says which it waits for.")
	}
	fmt.Fprintln(out)
}

func (r *Report) textPlan(out io.Writer) {
	for _, p := range r.Plan {
		verdict := "fits"
		if p.Units == 0 {
			verdict = "the charts take nothing from it"
		}
		if !p.Fits() {
			verdict = "DOES NOT FIT: lengthen --every or drop regions"
		}
		extra := ""
		if p.Categories > 0 {
			extra = fmt.Sprintf(", and %d for the category names", p.Categories)
		}
		fmt.Fprintf(out, "Plan: %d regions, %d pages a cycle, %.1f cycles a day%s = %d units a day in %s of %d: %s\n",
			p.Regions, p.Pages, p.RunsPerDay, extra, p.Units, p.Pool, p.Capacity, verdict)
	}
	for _, t := range r.Tiers {
		if msg := t.Unheld(); msg != "" {
			fmt.Fprintf(out, "Tier %d: %s\n", t.Tier, msg)
		}
	}
	if len(r.Plan) > 0 {
		fmt.Fprintf(out, "      (schedule: %s)\n", scheduleSource(r.ScheduleFrom))
	}
	fmt.Fprintln(out)
}

func (r *Report) textRegions(out io.Writer, loc *time.Location) {
	w := tw(out)
	fmt.Fprintln(w, "REGION\tSTATUS\tLAST RUN\tPAGES\tVIDEOS\tUNITS\tNEXT RUN\tNOTE")
	for _, g := range r.Regions {
		note := shortNote(g.Message)
		if !g.RetryAt.IsZero() {
			note = strings.TrimSpace(note + "; room again at " + g.RetryAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", strings.TrimSpace(g.Code+" "+g.Name), g.Status,
			orDash(g.LastRun, "2006-01-02 15:04Z07:00", time.UTC), g.Pages, g.Videos, g.Units,
			nextText(g.NextRun, g.NextFrom), note)
	}
	w.Flush()
	fmt.Fprintln(out, statusLegend)
	fmt.Fprintln(out)
}

// statusLegend says what each status means, under the regions table.
const statusLegend = `completed: the whole chart stored; stopped: the quota said no (the next run carries on);
interrupted: a signal stopped the pass between pages; skipped: the upstream has no chart there;
failed: see the note; never: no run yet`

func scheduleSource(from string) string {
	switch from {
	case "the daemon's":
		return "the daemon's --every, as it recorded it"
	case "--every":
		return "--every as given"
	}
	return "no daemon has recorded one: every 1h, the default"
}

// urlInNote matches what an http.Client error puts before its cause:
// Get "http://host/path?query": ...
var urlInNote = regexp.MustCompile(`(?:Get|Post|Put|Delete|Head) "[^"]*": `)

// maxNote bounds a note in the text report; --json keeps the whole message.
const maxNote = 72

// shortNote keeps the reason of a run's message: no URLs, and when it is
// still too long, its innermost causes (an error reads outer: inner), as
// many as fit in maxNote characters.
func shortNote(msg string) string {
	msg = urlInNote.ReplaceAllString(msg, "")
	parts := strings.Split(msg, ": ")
	for len(parts) > 1 && len([]rune(msg)) > maxNote {
		parts = parts[1:]
		msg = "…" + strings.Join(parts, ": ")
	}
	if r := []rune(msg); len(r) > maxNote {
		msg = string(r[:maxNote-1]) + "…"
	}
	return msg
}

func (r *Report) textBreakdowns(out io.Writer) {
	w := tw(out)
	fmt.Fprintln(w, "OPERATION\tCALLS\tUNITS (by pool)")
	for _, o := range r.Operations {
		fmt.Fprintf(w, "%s\t%d\t%s\n", o.Op, o.Calls, costs.PoolUnits(o.Units))
	}
	w.Flush()
	fmt.Fprintln(out)
	w = tw(out)
	fmt.Fprintln(w, "REGION\tCALLS\tUNITS (by pool)")
	for _, g := range r.ByRegion {
		fmt.Fprintf(w, "%s\t%d\t%s\n", g.Region, g.Calls, costs.PoolUnits(g.Units))
	}
	w.Flush()
	fmt.Fprintln(out)
	r.textClients(out)
}

var bars = []rune(" ▁▂▃▄▅▆▇█")

// textChart draws units per hour over the last 24 hours, one row a pool.
func (r *Report) textChart(out io.Writer) {
	fmt.Fprintf(out, "Units per hour, last 24 h (from %s UTC, one column an hour)\n", r.HourStart.UTC().Format("01-02 15:04"))
	for _, pool := range r.hourlyPools() {
		row := r.Hourly[pool]
		var peak int64
		for _, v := range row {
			peak = max(peak, v)
		}
		var b strings.Builder
		for _, v := range row {
			i := 0
			if peak > 0 && v > 0 {
				i = 1 + int(int64(len(bars)-2)*v/peak)
			}
			b.WriteRune(bars[i])
		}
		fmt.Fprintf(out, "  %-8s |%s| peak %d/h\n", pool, b.String(), peak)
	}
	if len(r.Hourly) == 0 {
		fmt.Fprintln(out, "  nothing spent")
	}
}

// ShortDuration prints 24h, not 24h0m0s.
// ShortDuration prints 24h, not 24h0m0s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	switch {
	case strings.HasSuffix(s, "h0m0s"):
		return strings.TrimSuffix(s, "0m0s")
	case strings.HasSuffix(s, "m0s"):
		return strings.TrimSuffix(s, "0s")
	}
	return s
}

// storageText is the report's database line: the file's size, the free
// pages inside it (which new rows reuse and a prune gives back, not free
// space on the disk: check says that), and the oldest chart run kept. A
// database that counts no free pages (PostgreSQL) says none.
func storageText(st store.Size) string {
	oldest := "none"
	if !st.OldestRun.IsZero() {
		oldest = st.OldestRun.UTC().Format(time.RFC3339)
	}
	free := ""
	if st.FreeBytes > 0 || st.Incremental {
		free = fmt.Sprintf(", %.1f MB of it free pages inside the file (new rows reuse them; not free disk)", float64(st.FreeBytes)/1e6)
	}
	return fmt.Sprintf("Database %.1f MB%s, oldest chart run %s", float64(st.Bytes)/1e6, free, oldest)
}
