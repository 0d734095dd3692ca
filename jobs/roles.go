// Package jobs is the job layer: the regions whose charts are ingested,
// the jobs (a chart's pass, tracking of view counts, pruning, a backfill)
// and the one daemon that runs them at their slots on the house clock.
//
// Every entry of the schedule (a chart, tracking, pruning) runs through the
// Runner the same way: an in-process guard, a lease across processes, the
// one LogEnd line and Observe (metrics). The Daemon builds the schedule,
// catches up the slots missed while no daemon ran, and on drain starts
// nothing new and waits for the runs in flight.
//
// A pass takes quota before every upstream call, fetches a page, and stores
// it in one transaction, following the chart's page tokens to the end. When
// the limiter says no, the pass ends as stopped, with the time at which it
// could go on; the next scheduled run carries on.
//
// The interfaces the jobs need are declared here, where they are used, and
// are small: a Limiter that takes units, a Source that yields pages and a
// Sink that stores them, a PruneStore that applies a retention. quota,
// fetch and store satisfy them.
//
// What is where: the job layer: the staggered schedule (its regions, codes,
// tiers and depths are regions/'s), what each kind of run costs until one is
// measured and what a day of category names costs (cost.go: Kind.Guess,
// DailyCost, which pacing is given), refresh and tracking as one sweep
// (sweep.go), each kind stating its own log line (Ended.Message), the jobs:
// Pass (a chart: a region, or a region and a category), Track (view counts
// with videos.batchGetStats, each video at the cadence of the best tier it
// charted in, inside a stats budget: Cadence; the refresh a share of what is
// due a pass), Prune (retention) and Backfill (a search, whose result says
// its own summary: BackfillResult.Summary), all classified one way; the
// charts' names in the schedule's order (ChartNames); a pass and a backfill
// run through one lifecycle (job.go: start a run, meter every call, classify
// how it ended, finish the run); the Runner (every entry the same way:
// in-process guard, lease, the LogEnd line, Observe; drain, runs in flight);
// a stop (stopping.go: from the first signal the limiter a run is handed
// refuses every call, retries included, Stopping; the work in flight gets
// StopBound); the Daemon (daemon.go: its Roster, what it runs, from which
// the pacer is planned before the daemon is built complete; one schedule,
// fired on the house clock (fire), whose entries are the chart passes,
// tracking and pruning, each with a name, a kind and its staggered slots, at
// each of which a Pacer (when set) decides whether it runs, and which it
// asks once a period, between the slots, to look at the limiter (Pacer.Look:
// a worker joining or leaving the key); the catch-up at start, highest
// priority first; the stop).
package jobs

import (
	"context"
	"time"

	"github.com/ingestworks/ingest"
)

// Limiter takes quota for one call of an operation.
type Limiter interface {
	// Take decides one call of op for by, whose region and run the
	// limiter's ledger keeps with it. A refusal is a Decision with Allowed
	// false.
	Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error)
	// Block refuses every call drawing from pool until the upstream's next
	// reset as the limiter's clock sees it, for every worker sharing the
	// quota key, and returns that time; op met the upstream's exhausted
	// quota.
	Block(ctx context.Context, pool, op string) (until time.Time, err error)
	// Refund gives back an admitted call that never reached the upstream.
	Refund(ctx context.Context, call ingest.Call) error
}

// Locker keeps a region from running twice at once, in one process or
// across processes and hosts.
type Locker interface {
	// Lock takes the named lease for ttl and renews it until unlock is
	// called. ok is false when another holder has it.
	Lock(ctx context.Context, name string, ttl time.Duration) (unlock func(), ok bool, err error)
}

// PassRecorder keeps how each pass of an entry that has no run row ended
// (tracking, the refresh, the prune), with the slot it ran for: pacing
// reads them back to credit every kind of pass to its slot, however long
// it ran, as it reads a chart's runs (docs/explanation/pacing.md).
type PassRecorder interface {
	RecordPass(ctx context.Context, entry string, started, finished, slot time.Time, status ingest.RunStatus) error
}

// Source yields pages from the upstream. gate is called before every
// attempt.
type Source interface {
	// Chart fetches one page of the chart of region and category (a
	// videoCategoryId; "" the unfiltered chart).
	Chart(ctx context.Context, gate ingest.Gate, region, category, pageToken string) (ingest.Page, error)
	Categories(ctx context.Context, gate ingest.Gate, region, hl string) ([]ingest.Category, error)
}

// Sink keeps a chart's runs and the pages they fetched. A chart is a
// region and a category (a videoCategoryId; "" the unfiltered chart).
type Sink interface {
	StartRun(ctx context.Context, region, category string, kind ingest.PageKind, at time.Time) (runID int64, err error)
	// StartSlotRun starts a trending run a daemon started for slot,
	// keeping the slot beside the start.
	StartSlotRun(ctx context.Context, region, category string, at, slot time.Time) (runID int64, err error)
	SavePage(ctx context.Context, runID int64, page ingest.Page) error
	RunFinisher
	// AbandonRuns fails the chart's runs left "running" by a worker that
	// died; the pass calls it holding the chart's lease.
	AbandonRuns(ctx context.Context, region, category string, kind ingest.PageKind, at time.Time) error
}

// CategoryStore keeps a region's category names.
type CategoryStore interface {
	CategoriesFetched(ctx context.Context, region string) (time.Time, error)
	SaveCategories(ctx context.Context, region string, cats []ingest.Category, at time.Time) error
}
