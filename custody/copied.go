package custody

// What keeps a copy of a database honest about the quota: a worker holds a
// lease on the database it writes, so that `ingest db copy` can tell a
// source still being written; and a copy of a SQLite file notes where its
// source is, so that its workers count the calls the source's ledger
// gained after the copy, which would otherwise be spent again.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// Working is what a command that spends (run, backfill) does before its
// first call on db: it takes this process's lease on the database until
// release (ledger.HoldWorker), refuses to start while a worker on a copy
// of this database runs (CopyLiveError), and on the embedded limiter (not
// onRedis), on a copy, holds a lease on the copy's source for as long as it
// runs and counts the calls the source gained after the copy
// (sourceCalls). The leases are taken before the other side's are read, on
// both sides, so that of a source's worker and a copy's starting at once,
// one sees the other. guard, when not nil, is what each of the worker's
// calls asks before and after its admission (Leashed).
func (r *Rules) Working(ctx context.Context, db *Database, onRedis bool, quotaKey string) (release func(), guard func(context.Context) error, err error) {
	host, _ := os.Hostname()
	own, err := db.Ledger.HoldWorker(ctx, host, os.Getpid(), r.Logger)
	if err != nil {
		return own, nil, err
	}
	releases := []func(){own}
	release = func() {
		for _, rel := range slices.Backward(releases) {
			rel()
		}
	}
	fail := func(err error) (func(), func(context.Context) error, error) {
		release()
		return func() {}, nil, err
	}
	if err := copiesLive(ctx, db.Ledger, r.dbName()); err != nil {
		return fail(err)
	}
	if onRedis {
		return release, nil, nil
	}
	if err := r.copiesCalls(ctx, db.Ledger, quotaKey); err != nil {
		return fail(err)
	}
	onSource, guard, err := r.sourceCalls(ctx, db.Ledger, quotaKey)
	if err != nil {
		return fail(err)
	}
	releases = append(releases, onSource)
	return release, guard, nil
}

// CopyLiveError: a worker would start on a database a worker on a copy of
// it still runs on, spending the same window while neither ledger holds
// the other's calls.
type CopyLiveError struct {
	DB      string
	Workers []ledger.CopyWorker
}

func (e *CopyLiveError) Error() string {
	ws := make([]string, len(e.Workers))
	for i, w := range e.Workers {
		ws[i] = w.String()
	}
	return fmt.Sprintf("%s was copied, and a worker runs on its copy: %s. Both would spend one window, and this database's "+
		"ledger holds none of the copy's calls. The copy is where the worker runs now: start none here while it runs "+
		"(docs/operations/growing.md)", e.DB, strings.Join(ws, "; "))
}

// copiesLive is a *CopyLiveError when a worker on a copy of db holds its
// lease on db (ledger.HoldCopyWorker).
func copiesLive(ctx context.Context, led *ledger.Ledger, name string) error {
	ws, err := led.CopyWorkers(ctx)
	if err != nil {
		return err
	}
	if len(ws) > 0 {
		return &ingest.ConfigError{Err: &CopyLiveError{DB: name, Workers: ws}}
	}
	return nil
}

// LiveError is a copy's source a worker is still writing: what runs on it
// and its last pass.
type LiveError struct {
	Source  string
	Workers []ledger.Worker
	Last    string // its last pass, "" when none
}

func (e *LiveError) Error() string {
	ws := make([]string, len(e.Workers))
	for i, w := range e.Workers {
		ws[i] = w.String()
	}
	last := "no pass yet"
	if e.Last != "" {
		last = "the last pass: " + e.Last
	}
	return fmt.Sprintf("a worker is still writing %s: %s; %s. Its calls after the copy would stay behind, and a worker on the copy "+
		"could spend them again: stop it first, then copy; or pass --two-step to copy the bulk beside it and stop it only for what "+
		"changed since; or --live to copy it as it is now (a copy of a SQLite file on this host counts, at its workers' start, "+
		"the calls its source gains after the copy)",
		e.Source, strings.Join(ws, ", "), last)
}

// Live is a *LiveError when a worker holds or renewed its lease on the
// database within the lease's span (ledger.WorkerTTL), else nil.
func Live(ctx context.Context, db *Database) error {
	ws, err := db.Ledger.Workers(ctx)
	if err != nil || len(ws) == 0 {
		return err
	}
	e := &LiveError{Source: db.Path, Workers: ws}
	last, err := db.Runs.LastRuns(ctx, ingest.Trending)
	if err != nil {
		return err
	}
	var at time.Time
	for _, r := range last {
		if r.Started.After(at) {
			at = r.Started
			e.Last = fmt.Sprintf("%s started %s, %s", r.Region, r.Started.UTC().Format(time.RFC3339), r.Status)
		}
	}
	return e
}

// LiveSource is Live on a copy's source db, named name (as messages name
// it: never a password): the *LiveError when a worker still writes it, nil
// when none does; a failure to read it is the copy's.
func LiveSource(ctx context.Context, db *Database, name string) (*LiveError, error) {
	err := Live(ctx, db)
	var le *LiveError
	if errors.As(err, &le) {
		le.Source = name
		return le, nil
	}
	if err != nil {
		return nil, fmt.Errorf("db copy: source: %w", err)
	}
	return nil, nil
}

// copyWorkedNote names, on a copy's source, each copy on a SQLite file a
// worker ran on (the copy's path follows it; its value is the copy's
// ledger id): a worker started here after it stopped counts that copy's
// calls (copiesCalls), as the copy's worker counted the source's.
const copyWorkedNote = "copy_worked "

// copiesCalls, for a worker on the embedded limiter, takes into db's
// ledger the calls of quotaKey within the pools' span that the copies a
// worker ran on (copyWorkedNote) hold and db lacks: going back to the
// source after a worker ran on its copy spends nothing twice. A copy that
// is gone or is another database now is passed over.
func (r *Rules) copiesCalls(ctx context.Context, led *ledger.Ledger, quotaKey string) error {
	copies, err := led.NotedUnder(ctx, copyWorkedNote)
	if err != nil || len(copies) == 0 {
		return err
	}
	since := r.now().Add(-r.Span)
	for _, path := range slices.Sorted(maps.Keys(copies)) {
		if !store.Exists(path) {
			continue
		}
		cdb, err := r.Open(ctx, path, false)
		if err != nil {
			r.Logger.Info("a copy of this database a worker ran on cannot be read: its calls are not counted", "copy", path, ingest.LogErr, err)
			continue
		}
		cled := cdb.Ledger
		if id, err := cled.LedgerID(ctx); err != nil || id != copies[path] {
			cdb.Close()
			continue
		}
		n, units, err := takeCalls(ctx, led, cled, quotaKey, since, r.now())
		cdb.Close()
		if err != nil {
			return fmt.Errorf("read the ledger of %s, a copy of this database a worker ran on: %w", path, err)
		}
		if n > 0 {
			r.Logger.Warn("a worker ran on a copy of this database, and the copy's ledger holds calls this one lacks: counted in this worker's window",
				"copy", path, ingest.LogCalls, n, ingest.LogUnits, units)
		}
	}
	return nil
}

// copySourceNote names, on a copy of a SQLite file, its source: where the
// file is, its ledger id and when it was copied. Notes named copy_* are
// a copy's own: never copied on, never summed (dbcopy).
const copySourceNote = "copy_source"

type copySource struct {
	Path   string `json:"path"`
	Ledger string `json:"ledger"`
	At     int64  `json:"at_ms"`
}

// NoteCopySource notes on dst, a finished copy of the SQLite file path
// (read through src), where its source is and its source's ledger id.
func NoteCopySource(ctx context.Context, src, dst *ledger.Ledger, path string, at time.Time) error {
	id, err := src.LedgerID(ctx)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(copySource{Path: abs, Ledger: id, At: at.UnixMilli()})
	return dst.Note(ctx, copySourceNote, string(b))
}

// SourceLiveError: a worker would start on a copy whose source's worker
// still runs, spending the same window.
type SourceLiveError struct {
	Source string
	Copied time.Time
	Live   *LiveError
}

func (e *SourceLiveError) Error() string {
	ws := make([]string, len(e.Live.Workers))
	for i, w := range e.Live.Workers {
		ws[i] = w.String()
	}
	return fmt.Sprintf("this database is a copy of %s taken %s, and a worker still runs on the source (%s): "+
		"both spend one window, and the source's calls after this start would be spent again here. "+
		"Stop the worker on the source first, then start this one: it counts the source's calls after the copy at its start "+
		"(docs/operations/growing.md)", e.Source, e.Copied.UTC().Format(time.RFC3339), strings.Join(ws, ", "))
}

// sourceCalls, for a worker on the embedded limiter, takes into db's ledger the calls of quotaKey its copy's
// source holds and it lacks, within the pools' span of the copy: the
// source's worker may have gone on after the copy. It holds a lease on the
// source until release, so that no worker starts there meanwhile
// (copiesLive), and refuses to start while one runs there. A source that
// is gone (the host moved) or is another database now is passed over.
//
// guard, when the lease was taken, is what each of the worker's calls
// asks first (leashed): a worker that stalled past its lease may have let
// a source's worker start unseen.
func (r *Rules) sourceCalls(ctx context.Context, led *ledger.Ledger, quotaKey string) (release func(), guard func(context.Context) error, err error) {
	release = func() {}
	raw, err := led.Noted(ctx, copySourceNote)
	var src copySource
	if err != nil || raw == "" || json.Unmarshal([]byte(raw), &src) != nil {
		return release, nil, err
	}
	since := r.now().Add(-r.Span)
	if time.UnixMilli(src.At).Before(since) || !store.Exists(src.Path) {
		return release, nil, nil
	}
	// Written to for the lease; a source no worker can write (its
	// directory read-only) is read only, and needs none.
	sdb, err := r.Open(ctx, src.Path, true)
	writable := err == nil
	if !writable {
		sdb, err = r.Open(ctx, src.Path, false)
	}
	if err != nil {
		r.Logger.Info("the source this database was copied from cannot be read: its calls after the copy are not counted",
			"source", src.Path, ingest.LogErr, err)
		return release, nil, nil
	}
	sled := sdb.Ledger
	if id, err := sled.LedgerID(ctx); err != nil || id != src.Ledger {
		sdb.Close()
		return release, nil, nil
	}
	held := func() {}
	if writable {
		host, _ := os.Hostname()
		here := r.dbName()
		if abs, err := filepath.Abs(r.DSN); err == nil && !store.IsURL(r.DSN) {
			here = abs
		}
		lease, err := sled.HoldCopyWorker(ctx, host, os.Getpid(), here, r.Logger)
		if err != nil {
			sdb.Close()
			return release, nil, fmt.Errorf("%s, this database's source: %w", src.Path, err)
		}
		held = lease.Release
		// A copy on a file can be read back from the source; one on a
		// server would need its credentials kept there.
		if !store.IsURL(r.DSN) {
			if err := noteCopyWorked(ctx, led, sled, here); err != nil {
				held()
				sdb.Close()
				return release, nil, fmt.Errorf("%s, this database's source: %w", src.Path, err)
			}
		}
		guard = r.sourceGuard(lease, led, sled, sdb, src, quotaKey)
	}
	release = func() { held(); sdb.Close() }
	if err := r.countSource(ctx, led, sled, sdb, src, quotaKey, since); err != nil {
		release()
		return func() {}, nil, err
	}
	return release, guard, nil
}

// sourceGuard is what a copy's worker asks before and after each call:
// nothing while its lease on the source held; once it lapsed (the worker
// stalled past it, and a source's worker may have started, reading it
// gone), the lease is renewed, so that no source's worker starts from
// here on, and then, as at the start, a worker running on the source
// refuses the call (*SourceLiveError) and none takes the source's calls
// since into this ledger (countSource).
func (r *Rules) sourceGuard(lease *ledger.Lease, led, sled *ledger.Ledger, sdb *Database, src copySource, quotaKey string) func(context.Context) error {
	var mu sync.Mutex
	return func(ctx context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		lapsed, err := lease.Lapsed(ctx)
		if err != nil || !lapsed {
			return err
		}
		if err := lease.Renew(ctx); err != nil {
			return fmt.Errorf("renew the lease on %s, this database's source, after it lapsed: %w", src.Path, err)
		}
		if err := r.countSource(ctx, led, sled, sdb, src, quotaKey, r.now().Add(-r.Span)); err != nil {
			return fmt.Errorf("this worker stalled past its lease on its source, and %w", err)
		}
		lease.Confirm()
		r.Logger.Warn("this worker stalled past its lease on its source: no worker runs there now, and the source's calls since are counted",
			"source", src.Path)
		return nil
	}
}

// Spender is what a leashed limiter spends through: a call taken, and
// one given back.
type Spender interface {
	Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error)
	Refund(ctx context.Context, call ingest.Call) error
}

// Leashed is a copy's worker's Take on l: each call asks guard (Working's)
// first and after its admission, so that a worker stalled past its lease on
// its source anywhere between (a call admitted while a source's worker ran
// unseen is given back) spends nothing beside a source's worker.
func Leashed(ctx context.Context, l Spender, quotaKey string, guard func(context.Context) error, by ingest.Caller, op string) (ingest.Decision, error) {
	if err := guard(ctx); err != nil {
		return ingest.Decision{}, err
	}
	d, err := l.Take(ctx, by, op)
	if err != nil || !d.Allowed {
		return d, err
	}
	if err := guard(ctx); err != nil {
		if rerr := l.Refund(ctx, d.Call(quotaKey, by)); rerr != nil {
			return ingest.Decision{}, errors.Join(err, fmt.Errorf("give back call %s: %w", d.ID, rerr))
		}
		return ingest.Decision{}, err
	}
	return d, nil
}

// countSource refuses a start while a worker runs on the source, and
// takes the source's calls since that led lacks into led.
func (r *Rules) countSource(ctx context.Context, led, sled *ledger.Ledger, sdb *Database, src copySource, quotaKey string, since time.Time) error {
	// A source whose worker runs on spends the same window after this
	// start as well, where no read at start can count it.
	var live *LiveError
	if err := Live(ctx, sdb); errors.As(err, &live) {
		return &ingest.ConfigError{Err: &SourceLiveError{Source: src.Path, Copied: time.UnixMilli(src.At), Live: live}}
	} else if err != nil {
		return fmt.Errorf("read the workers of %s, this database's source: %w", src.Path, err)
	}
	n, units, err := takeCalls(ctx, led, sled, quotaKey, since, r.now())
	if err != nil {
		return fmt.Errorf("read the ledger of %s, this database's source: %w", src.Path, err)
	}
	if n > 0 {
		r.Logger.Warn("this database is a copy, and its source's ledger holds calls made after the copy: counted in this worker's window",
			"source", src.Path, "copied", time.UnixMilli(src.At).UTC().Format(time.RFC3339), ingest.LogCalls, n,
			ingest.LogUnits, units)
	}
	return nil
}

// noteCopyWorked notes on the source (sled) that a worker runs on its copy
// at path, whose ledger is led.
func noteCopyWorked(ctx context.Context, led, sled *ledger.Ledger, path string) error {
	id, err := led.LedgerID(ctx)
	if err != nil {
		return err
	}
	return sled.Note(ctx, copyWorkedNote+path, id)
}

// takeCalls records in into the calls of quotaKey since from holds and
// into lacks, and from's blocks in force at now: how many calls and their
// units.
func takeCalls(ctx context.Context, into, from *ledger.Ledger, quotaKey string, since, now time.Time) (n int, units int64, err error) {
	theirs, err := from.Recall(ctx, quotaKey, since, now)
	if err != nil {
		return 0, 0, err
	}
	ours, err := into.Recall(ctx, quotaKey, since, now)
	if err != nil {
		return 0, 0, err
	}
	have := map[string]bool{}
	for _, c := range ours.Calls {
		have[c.ID] = true
	}
	for _, c := range theirs.Calls {
		if have[c.ID] {
			continue
		}
		if err := into.RecordCall(ctx, c); err != nil {
			return n, units, err
		}
		n++
		for _, ch := range c.Charges {
			units += ch.Units
		}
	}
	for _, b := range theirs.Blocks {
		if err := into.RecordBlock(ctx, b); err != nil {
			return n, units, err
		}
	}
	return n, units, nil
}
