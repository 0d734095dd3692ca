package sim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// checkOperator: what the operator read on /api/v1/quota is what the
// upstream charged (docs/api.md), and `ingest report` before the first
// start went on without a database (docs/contract.md).
func checkOperator(h *History) []string {
	out := checkBefore(h)
	if !h.Readers {
		return out
	}
	out = append(out, checkRunUnits(h)...)
	out = append(out, checkDaily(h)...)
	out = append(out, checkUsed(h)...)
	return append(out, checkRunsListed(h)...)
}

// reached is how long after the limiter admits a call the upstream may
// charge it: its delivery bound, and the second the ledger's times are
// read to (as checkCharged reads them).
const reached = ingest.Delivery + time.Second

// chargedIn is what the upstream charged pool ("" every pool) for the
// calls it answered from from to before to, and that keep says belong.
func chargedIn(calls []Call, pool string, from, to time.Time, keep func(Call) bool) int64 {
	return inTime(calls).chargedIn(pool, from, to, keep)
}

// chargeOf is what the upstream charges a call: its operation's cost,
// failed calls included (ingest.Operation). The running count a call keeps
// cannot say it: two calls answered at once may each read the other's.
func chargeOf(c Call) []ingest.Charge {
	path := c.Path[strings.LastIndex(c.Path, "/")+1:]
	for _, o := range ingest.Operations {
		if o.Path == path {
			return o.Cost
		}
	}
	return nil
}

// checkRunUnits: each chart's last run, as /api/v1/quota's regions name
// it, took the units the upstream charged for the calls that name its
// chart (its pages) or its region (the category names its pass reads),
// from its start until its end and the delivery bound after, or the
// chart's next run: a call made outside every pass (the region
// catalogue's) is no run's. Exact: the run's units are its calls' in the
// ledger, and every call the upstream charged is there.
func checkRunUnits(h *History) []string {
	calls := inTime(h.Calls)
	byChart := map[string][]Run{}
	for _, r := range h.Runs {
		if h.peers(r) {
			continue
		}
		name := chartName(r.Region, r.Category)
		byChart[name] = append(byChart[name], r)
	}
	var wrong []string
	checked := 0
	for _, rd := range h.Operator {
		if rd.Down || rd.Err != "" || h.onCopy(rd.At) {
			continue
		}
		for _, last := range rd.Last {
			checked++
			runs := byChart[last.Chart]
			k := sort.Search(len(runs), func(i int) bool { return !runs[i].Started.Truncate(time.Second).Before(last.Started) })
			if k == len(runs) || !runs[k].Started.Truncate(time.Second).Equal(last.Started) {
				wrong = append(wrong, fmt.Sprintf("at %s %s's last run started at %s, which the database has not", stamp(rd.At), last.Chart, stamp(last.Started)))
				continue
			}
			r := runs[k]
			end := r.Finished
			if end.IsZero() {
				end = rd.Answered
			}
			end = end.Add(reached)
			if k+1 < len(runs) && runs[k+1].Started.Before(end) {
				end = runs[k+1].Started
			}
			want := calls.chargedIn("", r.Started, end, func(c Call) bool {
				return c.Region == r.Region && (c.Kind == KindCategories || c.Kind == KindChart && c.Category == r.Category)
			})
			if last.Units != want {
				wrong = append(wrong, fmt.Sprintf("at %s %s's last run %d (from %s) took %d units, the upstream charged %d for its calls",
					stamp(rd.At), last.Chart, r.ID, stamp(r.Started), last.Units, want))
			}
		}
	}
	var out []string
	if len(wrong) > 0 {
		out = append(out, fmt.Sprintf("operator: %d of %d last runs on /api/v1/quota said otherwise than the upstream: %s", len(wrong), checked, firstFew(wrong)))
	}
	if checked == 0 && (len(h.Operator) > 0 || h.Log != "") { // a history made by hand may leave the operator out
		out = append(out, fmt.Sprintf("operator: /api/v1/quota was read %d times and never named a chart's last run: the runs' units were not checked", len(h.Operator)))
	}
	return out
}

// checkDaily: each pool's units a UTC day on /api/v1/quota (today's so
// far) are what the upstream charged that day, but for the calls admitted
// before a midnight and charged after it, within the delivery bound. A day
// a worker of another database spent on the key is left out: its calls
// are in its own ledger, which this site does not read; so is a day the
// prune may have cut from the ledger.
func checkDaily(h *History) []string {
	calls := inTime(h.Calls)
	var wrong []string
	checked := 0
	for _, rd := range h.Operator {
		if rd.Down || rd.Err != "" || h.onCopy(rd.At) {
			continue
		}
		kept := rd.At.Add(-ingest.StandardStanding().StatsFor).Add(24 * time.Hour)
		for pool, days := range rd.Daily {
			for i, units := range days {
				from := rd.DailyFrom.AddDate(0, 0, i)
				to := from.Add(24 * time.Hour)
				if from.Before(kept) || !from.Before(rd.At) || h.peerIn(from, to.Add(reached)) {
					continue
				}
				lo := calls.chargedIn(pool, from.Add(reached), earlier(to, rd.At), nil)
				hi := calls.chargedIn(pool, from, earlier(to, rd.Answered).Add(reached), nil)
				checked++
				if units < lo || units > hi {
					wrong = append(wrong, fmt.Sprintf("at %s pool %s's day %s: %d units, the upstream charged %d to %d",
						stamp(rd.At), pool, from.Format(time.DateOnly), units, lo, hi))
				}
			}
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("operator: %d of %d days' units on /api/v1/quota's daily were not the upstream's charge: %s", len(wrong), checked, firstFew(wrong))}
}

// checkUsed: each pool's used units on /api/v1/quota count every unit
// the upstream charged for the calls admitted in the span the limiter
// holds a call for: its window and the delivery bound (docs/explanation/quota.md).
// A bound below alone: a call the limiter admitted and the upstream never
// charged (given up at a stop, or not kept by a full disk) stays spent. A
// limiter that did not answer, or that waits after a data loss, is not
// read.
func checkUsed(h *History) []string {
	calls := inTime(h.Calls)
	var wrong []string
	checked := 0
	for _, rd := range h.Operator {
		if rd.Down || rd.Err != "" || h.onCopy(rd.At) {
			continue
		}
		for _, p := range h.Costs.Pools {
			used, ok := rd.Used[p.Name]
			if !ok {
				continue
			}
			from := rd.At.Add(-p.Window - ingest.Delivery)
			least := calls.chargedIn(p.Name, from.Add(reached), rd.At, nil)
			checked++
			if used < least {
				wrong = append(wrong, fmt.Sprintf("at %s pool %s: %d units used, under the %d the upstream charged for the calls admitted in its %s and the delivery bound",
					stamp(rd.At), p.Name, used, least, p.Window))
			}
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("operator: %d of %d pools' used units on /api/v1/quota counted less than the upstream charged: %s", len(wrong), checked, firstFew(wrong))}
}

// checkRunsListed: /api/v1/runs lists chart runs newest first, each as
// the database has it: its chart and start, and once finished, its end,
// status and pages (a finished run changes no more).
func checkRunsListed(h *History) []string {
	byID := map[int64]Run{}
	for _, r := range h.Runs {
		if !h.peers(r) {
			byID[r.ID] = r
		}
	}
	var wrong []string
	listed := 0
	for _, rd := range h.Operator {
		if rd.Down || rd.Err != "" || h.onCopy(rd.At) {
			continue
		}
		for i, l := range rd.Runs {
			listed++
			if i > 0 && l.ID >= rd.Runs[i-1].ID {
				wrong = append(wrong, fmt.Sprintf("at %s run %d listed after run %d, not newest first", stamp(rd.At), l.ID, rd.Runs[i-1].ID))
			}
			r, ok := byID[l.ID]
			db := Run{Region: r.Region, Category: r.Category, Status: l.Status, Started: r.Started.Truncate(time.Second), Pages: l.Pages}
			if !l.Finished.IsZero() {
				db.Finished, db.Status, db.Pages = r.Finished.Truncate(time.Second), r.Status, r.Pages
			}
			if !ok || chartName(db.Region, db.Category) != l.Chart || !db.Started.Equal(l.Started) || !db.Finished.Equal(l.Finished) ||
				db.Status != l.Status || db.Pages != l.Pages {
				wrong = append(wrong, fmt.Sprintf("at %s run %d listed as %s %s from %s to %s with %d pages, the database has it %s %s from %s to %s with %d",
					stamp(rd.At), l.ID, l.Chart, l.Status, stamp(l.Started), stamp(l.Finished), l.Pages,
					chartName(r.Region, r.Category), r.Status, stamp(r.Started), stamp(r.Finished), r.Pages))
			}
		}
	}
	if len(wrong) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("operator: %d of %d runs on /api/v1/runs were not as listed: %s", len(wrong), listed, firstFew(wrong))}
}

// peerIn: a worker of another database spent on the key between from and
// to, or the daemon did on a copy of its own (CopyAt), whose ledger and
// runs the checker does not read.
func (h *History) peerIn(from, to time.Time) bool {
	for _, p := range h.Peers {
		if p.From.Before(to) && p.To.After(from) {
			return true
		}
	}
	for _, m := range h.Moved {
		if m.From.Before(to) && (m.To.IsZero() || m.To.After(from)) {
			return true
		}
	}
	return false
}

// checkBefore: `ingest report` on the host before the first start, where
// there was no database, answered, said there was none, every region
// never run, and made no file.
func checkBefore(h *History) []string {
	b := h.Before
	if !b.Asked {
		return nil
	}
	var out []string
	if b.Err != "" {
		out = append(out, fmt.Sprintf("ingest report before the first start, with no database yet, failed: %s", b.Err))
	}
	if b.Database {
		out = append(out, "ingest report before the first start said a database was there")
	}
	if b.Created {
		out = append(out, "ingest report before the first start left a file at the database's path")
	}
	for code, st := range b.Statuses {
		if st != ingest.StatusNever {
			out = append(out, fmt.Sprintf("ingest report before the first start said %s's status was %s, not never", code, st))
		}
	}
	if b.Err == "" && len(b.Statuses) == 0 {
		out = append(out, "ingest report before the first start named no region")
	}
	return out
}

// peers says whether r is a run of a worker of another database (its ids
// are its database's), which the checker reads beside the daemon's.
func (h *History) peers(r Run) bool {
	for _, p := range h.Peers {
		if p.Region == r.Region && !r.Started.Before(p.From.Truncate(time.Millisecond)) && !r.Started.After(p.To) {
			return true
		}
	}
	return false
}

// onCopy: the daemon ran on a copy of its database at t (CopyAt).
func (h *History) onCopy(t time.Time) bool {
	for _, m := range h.Moved {
		if !t.Before(m.From) && (m.To.IsZero() || !t.After(m.To)) {
			return true
		}
	}
	return false
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
