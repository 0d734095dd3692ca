package sim

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// Backfill is one `ingest backfill --region R --since S --until U
// --max-units N` a shape runs beside the daemon, on its database and
// quota key, At after Start: the same command again resumes it
// (docs/contract.md).
type Backfill struct {
	At           time.Duration
	Region       string
	Since, Until time.Time
	MaxUnits     int64 // 0: no cap
}

// Backfilled is a Backfill as it ran: when, how it ended, and what the
// database held of it just after: the videos its runs stored as search
// results, and the trending entries of any search run.
type Backfilled struct {
	Backfill
	Interval
	Err     error
	Results []string
	Entries int
	// Said is what the command printed its operator.
	Said string
}

// backfilling marks a request's context as the backfill's: the upstream
// tells its videos.list by id (the details of a search page) from the
// refresh's, which asks the same.
type backfilling struct{}

// backfills runs each of c's Backfills at its time after c.Start, one
// after the other, on a goroutine of its own so that the nemesis keeps its
// times, logging beside the daemon's log (their passes are not the
// daemon's); wait returns them once each has ended.
func backfills(c Config, dsn string, up *Upstream, boot func() (string, time.Duration, bool)) (wait func() []Backfilled, err error) {
	if len(c.Backfills) == 0 {
		return func() []Backfilled { return nil }, nil
	}
	logf, err := os.Create(filepath.Join(c.Dir, "backfill.log"))
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	var out []Backfilled
	wg.Add(1)
	go func() {
		defer wg.Done()
		log := slog.New(slog.NewTextHandler(logf, nil))
		for _, b := range c.Backfills {
			time.Sleep(time.Until(c.Start.Add(b.At)))
			from := time.Now()
			said, err := backfill(dsn, c.Shape, up, boot, log, b)
			ran := Backfilled{Backfill: b, Interval: Interval{from, time.Now()}, Err: err, Said: said}
			if rerr := ran.read(dsn); ran.Err == nil {
				ran.Err = rerr
			}
			out = append(out, ran)
		}
	}()
	return func() []Backfilled {
		wg.Wait()
		logf.Close()
		return out
	}, nil
}

// backfill runs b as `ingest backfill` runs it (wiring.Host.Backfill),
// with the daemon's edges swapped as run swaps them; what it printed.
func backfill(dsn string, s Shape, up *Upstream, boot func() (string, time.Duration, bool), log *slog.Logger, b Backfill) (string, error) {
	h := &wiring.Host{DSN: dsn, RedisURL: s.Redis, RedisHook: s.RedisHook, Endpoint: "http://fakeyt.sim/", Costs: s.Costs, Logger: log,
		Clock: clock.System, Transport: up, Uptime: boot, Signals: make(chan os.Signal), Jitter: up.Jitter}
	id := ingest.BackfillID{Region: b.Region, Since: b.Since, Until: b.Until}
	job := &jobs.Backfill{ID: id, Query: ingest.SearchQuery{Region: b.Region, After: b.Since, Before: b.Until}, MaxUnits: b.MaxUnits,
		Costs: s.Costs, Logger: log, Clock: clock.System}
	ctx := context.WithValue(context.Background(), backfilling{}, true)
	var said strings.Builder
	err := h.Backfill(ctx, Key, ledger.KeyHash(Key), wiring.Backfill{Job: job, Out: &said})
	return said.String(), err
}

// read is what the database holds of b's runs just after it: the videos
// of the search results of the search runs it started, and the trending
// entries of every search run (none: a backfill stores search results).
func (b *Backfilled) read(dsn string) error {
	ctx := context.Background()
	db, err := wiring.OpenExisting(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.DB.Reader().QueryContext(ctx, `SELECT v.id FROM search_results s JOIN runs r ON r.id = s.run_id
		JOIN videos v ON v.vid = s.vid WHERE r.kind = 'search' AND r.started_ms BETWEEN ? AND ?`, b.From.UnixMilli(), b.To.UnixMilli())
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		b.Results = append(b.Results, id)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return db.DB.Reader().QueryRowContext(ctx, `SELECT count(*) FROM trending_entries e JOIN runs r ON r.id = e.run_id
		WHERE r.kind = 'search'`).Scan(&b.Entries)
}

// readSearchResults is when each search result the database holds was
// fetched.
func readSearchResults(ctx context.Context, db *store.DB) ([]time.Time, error) {
	rows, err := db.Reader().QueryContext(ctx, `SELECT fetched_ms FROM search_results ORDER BY fetched_ms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			return nil, err
		}
		out = append(out, time.UnixMilli(ms))
	}
	return out, rows.Err()
}
