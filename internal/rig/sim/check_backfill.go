package sim

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
)

// checkBackfills: each `ingest backfill` the shape ran holds what
// docs/contract.md and DESIGN's Jobs promise, read from the fake's calls
// and the database:
//   - it ended without an error but the limiter's refusal;
//   - its calls (searches and their details) cost, every pool together,
//     no more than its --max-units;
//   - the videos its searches named, but those the upstream forgot, are
//     search results of its runs just after it, and no search run has a
//     trending entry;
//   - no search page is answered twice, nor a video's details asked twice
//     by a backfill: running the same command again resumes it, and never
//     pays for a page twice.
//
// Its pools' days and windows are every call's (checkUpstreamDays,
// checkWindows); its results' age at the end is checkSearchPruned's.
func checkBackfills(h *History) []string {
	var out []string
	forgotten := map[string]bool{}
	for _, g := range h.Forgotten {
		forgotten[g.ID] = true
	}
	for _, b := range h.Backfilled {
		at := b.From.UTC().Format(time.RFC3339)
		if b.Err != nil && !errors.Is(b.Err, ingest.ErrQuotaExhausted) {
			out = append(out, fmt.Sprintf("backfill of %s at %s: %v", b.Region, at, b.Err))
		}
		var units int64
		var named []string
		for _, c := range h.backfillCalls(b.Interval) {
			units += c.units
			if c.Kind == KindSearch && c.Status == http.StatusOK && !c.Cut {
				named = append(named, c.IDs...)
			}
		}
		if b.MaxUnits > 0 && units > b.MaxUnits {
			out = append(out, fmt.Sprintf("backfill of %s at %s: its calls cost %d units, over its --max-units %d", b.Region, at, units, b.MaxUnits))
		}
		var missing []string
		for _, id := range named {
			if !forgotten[id] && !slices.Contains(b.Results, id) {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("backfill of %s at %s: %d of the %d videos its searches named are not search results of its runs: %s",
				b.Region, at, len(missing), len(named), firstFew(missing)))
		}
		if w := summaryWrong(b); w != "" {
			out = append(out, fmt.Sprintf("backfill of %s at %s: %s", b.Region, at, w))
		}
		if b.Entries > 0 {
			out = append(out, fmt.Sprintf("backfill of %s at %s: search runs hold %d trending entries, where a backfill stores search results alone",
				b.Region, at, b.Entries))
		}
	}
	return append(out, checkPaidOnce(h)...)
}

// backfillCall is a call of a backfill and what the upstream charged it,
// every pool together.
type backfillCall struct {
	Call
	units int64
}

// backfillCalls are the backfill's calls in in: its searches and their
// details.
func (h *History) backfillCalls(in Interval) []backfillCall {
	var out []backfillCall
	prev := map[string]int64{}
	for _, c := range h.Calls {
		var units int64
		for pool, n := range c.Charged {
			units += n - prev[pool]
			prev[pool] = n
		}
		if (c.Kind == KindSearch || c.Kind == KindDetails) && in.Contains(c.At) {
			out = append(out, backfillCall{c, units})
		}
	}
	return out
}

// checkPaidOnce: no search page (its region, words, window and page
// token) answered twice, and no video's details asked twice by the
// backfills, but after an answer cut short or failed.
func checkPaidOnce(h *History) []string {
	pages, details := map[[3]string]time.Time{}, map[string]time.Time{}
	var again []string
	for _, c := range h.Calls {
		if c.Status != http.StatusOK || c.Cut {
			continue
		}
		switch c.Kind {
		case KindSearch:
			key := [3]string{c.Region, c.Category, c.Page}
			if last, ok := pages[key]; ok {
				again = append(again, fmt.Sprintf("search page %q of %s at %s and %s", c.Page, c.Region, last.UTC().Format(time.RFC3339), c.At.UTC().Format(time.RFC3339)))
			}
			pages[key] = c.At
		case KindDetails:
			for _, id := range c.IDs {
				if last, ok := details[id]; ok {
					again = append(again, fmt.Sprintf("the details of %s at %s and %s", id, last.UTC().Format(time.RFC3339), c.At.UTC().Format(time.RFC3339)))
				}
				details[id] = c.At
			}
		}
	}
	if len(again) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d times a backfill paid again for what it had: %s", len(again), firstFew(again))}
}

// checkSearchPruned: no search result the database holds at the end was
// fetched longer ago than the terms' days (ingest.DataFor) and a period
// and a half of --every, the prune's slot and its lateness, but for the
// downtime (docs/explanation/terms.md: backfill results go after 30 days,
// whatever --keep says).
func checkSearchPruned(h *History) []string {
	if len(h.SearchResults) == 0 {
		return nil
	}
	cut := h.End.Add(-ingest.DataFor - h.Every - h.Every/2)
	cut = cut.Add(-h.excused(cut, h.End, h.Every))
	if oldest := h.SearchResults[0]; oldest.Before(cut) {
		n := 0
		for _, t := range h.SearchResults {
			if t.Before(cut) {
				n++
			}
		}
		return []string{fmt.Sprintf("%d search results are kept at the end fetched before %s, the oldest at %s (%s before the end), past the terms' %s and a period and a half of --every %s",
			n, cut.UTC().Format(time.RFC3339), oldest.UTC().Format(time.RFC3339), h.End.Sub(oldest).Round(time.Hour), ingest.DataFor, h.Every)}
	}
	return nil
}

// summaryWrong is what is wrong with what a backfill printed its
// operator, "" for nothing: its summary, a line that names its region
// ("backfill DE: completed; this run: ..."), says what it spent and stored
// and, stopped, when the quota has room again (its --help), every verb of
// it filled: a format handed its arguments out of order prints Go's "%!"
// complaint and the operator is told nothing. A backfill that failed
// before it began may print nothing.
func summaryWrong(b Backfilled) string {
	if b.Said == "" && b.Err != nil {
		return ""
	}
	if strings.Contains(b.Said, "%!") {
		return fmt.Sprintf("what it printed holds a format's complaint: %q", cut(b.Said))
	}
	for _, line := range strings.Split(b.Said, "\n") {
		if summaryLine.MatchString(line) && strings.HasPrefix(line, "backfill "+b.Region+": ") {
			return ""
		}
	}
	return fmt.Sprintf("it printed no summary of its run: %q", cut(b.Said))
}

// summaryLine is the backfill's summary, as it prints it.
var summaryLine = regexp.MustCompile(`^backfill [A-Z]{2}: [a-z]+; this run: \d+ pages, \d+ videos, [^;]* units; in all: \d+ pages, \d+ videos$`)
