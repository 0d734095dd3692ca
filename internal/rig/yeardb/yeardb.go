// Package yeardb builds a database that looks like months of a daemon's
// work, with the store's own writer, so that benchmarks and tests can
// measure commands at the scale users reach: hourly runs of every default
// chart (every default region's unfiltered chart), or the charts a
// --regions selection names at their tiers and depths (every catalogued
// region, say, the defaults hourly and whole, the rest every 3 hours to
// their top 50), each page stored with
// SavePage and charged to the ledger with RecordCall, a daily
// videoCategories.list per region, and tracking's counts. The charts churn
// as real ones do (charts.go: most videos stay one to seven days, a few for
// weeks, some on several charts), and their text is written in the
// languages and scripts of each region, with a vocabulary of tens of
// thousands of words (words.go), so that search and the index meet a
// year's variety.
//
// cmd/yeardb is the command that runs it:
//
//	go run ./cmd/yeardb -db /tmp/year.db -days 365
//	go run ./cmd/yeardb -db /tmp/all.db -days 30 -regions 'all:tier=3:depth=50,default:tier=1:depth=200'
//
// What is where: builds a database of a year of the default daemon's work
// (hourly runs of charts that churn, text in each region's languages and
// scripts, tracking) with the store's own writer, tracking at the daemon's
// cadence (jobs.Cadence's rule, written again in tracking.go so the builder
// stays below the job layer), for the year-scale benches (go run
// ./cmd/yeardb).
package yeardb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
)

// Version names what a build writes: a database built by another version
// is not the same year (scripts/bench-scale.sh keys its cache by it).
const Version = "4"

// QuotaKey is the quota key the built ledger is written under.
const QuotaKey = "yeardb"

// Options shape a build; the zero value is a year ending now.
type Options struct {
	// Days of hourly runs; 0 is 365.
	Days int
	// End is the hour the last runs start in (each region at its offset
	// in it); zero is the hour before the current one, so that no run
	// starts in the future.
	End time.Time
	// Regions are the charts' regions, each hourly and whole; nil is
	// regions.Default. Charts, when set, wins over it.
	Regions []string
	// Charts are the charts as --regions selects them (regions.Parse): a
	// tier-N chart runs every N hours, and a pass stores the top Depth
	// videos of the region's chart.
	Charts []regions.Chart
	// Seed picks the world: its videos, their words and their stays.
	Seed uint64
	// Progress, when set, is called after each day is stored.
	Progress func(day, days int)
	// Track, when set, writes what the daemon's default tracking writes:
	// after each hour's passes, the counts of the videos a chart showed
	// in the last Track (store.ChartedSince) that its cadence reads in that
	// hour (tracking.go: each at its best chart's tier, inside the shipped
	// stats pool), 50 a videos.batchGetStats call charged to the stats
	// pool. Zero writes none.
	Track time.Duration
}

// BuildWith creates the database at path as o says. The file must not
// exist yet: a build never adds to a database someone uses.
func BuildWith(ctx context.Context, path string, o Options) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("yeardb: %s exists; remove it or choose another path", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("yeardb: %w", err)
	}
	o = o.withDefaults()
	db, err := store.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("yeardb: %w", err)
	}
	b := &builder{db: db, led: ledger.New(db), o: o, tiers: map[string]int{}}
	for _, c := range o.Charts {
		b.tiers[c.Code] = c.Tier
	}
	err = b.build(ctx)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("yeardb: %w", err)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.Days <= 0 {
		o.Days = 365
	}
	if o.End.IsZero() {
		o.End = time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	}
	if o.Regions == nil {
		o.Regions = regions.Default
	}
	if o.Charts == nil {
		for _, code := range o.Regions {
			o.Charts = append(o.Charts, regions.Chart{Code: code})
		}
	}
	o.Charts = slices.Clone(o.Charts)
	for i := range o.Charts {
		o.Charts[i].Tier = max(o.Charts[i].Tier, 1)
		if o.Charts[i].Depth <= 0 {
			o.Charts[i].Depth = regions.MaxDepth
		}
	}
	return o
}

// builder writes the runs hour by hour, oldest first, with the fake's
// clock at the hour being written.
type builder struct {
	db    *store.DB
	led   *ledger.Ledger
	world *world
	o     Options
	calls int64
	// tiers are the charts' tiers by region, which tracking's cadence
	// follows.
	tiers map[string]int
}

func (b *builder) build(ctx context.Context) error {
	start := b.o.End.Add(-time.Duration(b.o.Days*24-1) * time.Hour)
	codes := make([]string, len(b.o.Charts))
	for i, c := range b.o.Charts {
		codes[i] = c.Code
	}
	b.world = newWorld(b.o.Seed, codes, start)
	for h := 0; h < b.o.Days*24; h++ {
		hour := start.Add(time.Duration(h) * time.Hour)
		for i, c := range b.o.Charts {
			// A tier-N chart every N hours, the charts of a tier spread
			// over its hours (chart i in the hours h = i mod N); staggered
			// as the daemon staggers them: chart i at i/n of the hour.
			if (h-i)%c.Tier != 0 {
				continue
			}
			at := hour.Add(time.Duration(i) * time.Hour / time.Duration(len(b.o.Charts)))
			if err := b.pass(ctx, c, h, at); err != nil {
				return err
			}
		}
		if err := b.track(ctx, hour.Add(time.Hour-time.Hour/16)); err != nil {
			return err
		}
		if b.o.Progress != nil && h%24 == 23 {
			b.o.Progress(h/24+1, b.o.Days)
		}
	}
	return nil
}

// pass stores one completed run of c's chart at time at: its top
// c.Depth videos.
func (b *builder) pass(ctx context.Context, c regions.Chart, h int, at time.Time) error {
	region := c.Code
	run, err := b.db.StartRun(ctx, region, "", ingest.Trending, at)
	if err != nil {
		return err
	}
	if h%24 < c.Tier {
		if err := b.categories(ctx, region, run, at); err != nil {
			return err
		}
	}
	chart := b.world.chart(region, h, at)
	chart = chart[:min(len(chart), c.Depth)]
	for n := 0; n*store.PageSize < len(chart); n++ {
		videos := chart[n*store.PageSize : min((n+1)*store.PageSize, len(chart))]
		t := at.Add(time.Duration(n+1) * 300 * time.Millisecond)
		if err := b.charge(ctx, ingest.OpVideosList, region, run, t); err != nil {
			return err
		}
		page := ingest.Page{Kind: ingest.Trending, Region: region, Number: n + 1, Videos: videos, Fetched: t}
		if err := b.db.SavePage(ctx, run, page); err != nil {
			return err
		}
	}
	return b.db.FinishRun(ctx, run, ingest.RunEnd{Status: ingest.StatusCompleted, At: at.Add(2 * time.Second)})
}

func (b *builder) categories(ctx context.Context, region string, run int64, at time.Time) error {
	if err := b.charge(ctx, ingest.OpCategoriesList, region, run, at); err != nil {
		return err
	}
	cats := []ingest.Category{{Region: region, ID: "10", Title: "Music"}, {Region: region, ID: "20", Title: "Gaming"},
		{Region: region, ID: "24", Title: "Entertainment"}}
	return b.db.SaveCategories(ctx, region, cats, at)
}

// track stores one tracking pass at time at, as the daemon's does: in
// the middle of the last region's slot, a stats call charged per 50
// videos. The pass's counts are stored in one statement, not one per call
// as the daemon does: the rows are the same and a year builds faster.
func (b *builder) track(ctx context.Context, at time.Time) error {
	if b.o.Track <= 0 {
		return nil
	}
	charted, err := b.db.ChartedSince(ctx, at.Add(-b.o.Track))
	if err != nil {
		return err
	}
	ids := b.due(charted, at)
	for n := 0; n < len(ids); n += trackBatch {
		if err := b.chargeIn(ctx, ingest.OpBatchGetStats, "stats", "", 0, at); err != nil {
			return err
		}
	}
	return b.db.SaveStats(ctx, b.world.stats(ids, at))
}

// trackBatch is how many videos one videos.batchGetStats call reads.
const trackBatch = 50

// charge writes one call of op to the ledger, as the limiter's gate does.
func (b *builder) charge(ctx context.Context, op, region string, run int64, at time.Time) error {
	return b.chargeIn(ctx, op, "default", region, run, at)
}

func (b *builder) chargeIn(ctx context.Context, op, pool, region string, run int64, at time.Time) error {
	b.calls++
	return b.led.RecordCall(ctx, ingest.Call{QuotaKey: QuotaKey, ID: "y" + strconv.FormatInt(b.calls, 36), At: at,
		Op: op, Region: region, RunID: run, Charges: []ingest.Charge{{Pool: pool, Units: 1}}})
}
