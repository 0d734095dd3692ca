package quota_test

// The tests' way to build a limiter: the fields a test sets, the
// required arguments the constructors take made from them, and a ledger
// double for the roles a test leaves out.

import (
	"context"
	"database/sql"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/wiring"
)

// limOpts is a test's limiter: the quota key, the ledger's parts it cares
// about, the upstream's clock and the tunables.
type limOpts struct {
	QuotaKey    string
	Costs       *ingest.Costs
	Timeout     time.Duration
	Logger      *slog.Logger
	Ledger      string
	Where       string
	Recall      func(ctx context.Context) (ingest.Recalled, error)
	Grant       func(ctx context.Context, decide func([]ingest.Call) (*ingest.Call, error)) error
	Record      quota.Recorder
	Notes       quota.Notebook
	Unknowns    quota.UnknownLedger
	Upstream    *quota.UpstreamClock
	Replicas    int
	Beat, Guard time.Duration
	Clock       clock.Clock // the host's when nil
	ClockOffset time.Duration
	Drift       func() time.Duration // added to ClockOffset at each decision; nil: none
	Uptime      func() (boot string, since time.Duration, ok bool)
	Delivery    time.Duration
}

func (o limOpts) options() quota.Options {
	return quota.Options{Timeout: o.Timeout, Logger: o.Logger, Replicas: o.Replicas,
		Beat: o.Beat, Guard: o.Guard, Uptime: o.Uptime, Delivery: o.Delivery,
		ClockOffset: func() time.Duration {
			if o.Drift != nil {
				return o.ClockOffset + o.Drift()
			}
			return o.ClockOffset
		}}
}

// clock is the test's, else the host's: the harness's default.
func (o limOpts) clock() clock.Clock {
	if o.Clock == nil {
		return clock.System
	}
	return o.Clock
}

// costs are the test's, else the built-in costs.yaml.
func (o limOpts) costs() *ingest.Costs {
	if o.Costs == nil {
		return costs.Default()
	}
	return o.Costs
}

var ledgerCount atomic.Int64

// parts are the required arguments: the test's, and the double's where
// the test gave none.
func (o limOpts) parts() (quota.Ledger, *quota.UpstreamClock) {
	d := &ledgerDouble{recall: o.Recall, grant: o.Grant}
	l := quota.Ledger{ID: o.Ledger, Where: o.Where, Record: o.Record, Recall: d, Grant: d, Notes: o.Notes, Unknowns: o.Unknowns}
	if l.ID == "" {
		l.ID = "ledger-" + strconv.FormatInt(ledgerCount.Add(1), 10) // one per limiter, as a random id was
	}
	if l.Where == "" {
		l.Where = "test:/" + l.ID
	}
	if l.Record == nil {
		l.Record = d
	}
	if l.Notes == nil {
		l.Notes = &notes{m: map[string]string{}}
	}
	if l.Unknowns == nil {
		l.Unknowns = &unknownsDouble{}
	}
	up := o.Upstream
	if up == nil {
		up = quota.NoUpstreamClock
	}
	return l, up
}

func newRedis(c redis.UniversalClient, o limOpts) (*quota.Redis, error) {
	l, up := o.parts()
	return quota.NewRedis(c, o.QuotaKey, o.costs(), l, up, o.clock(), o.options())
}

func newSQLite(db *sql.DB, o limOpts) (*quota.SQLite, error) {
	l, up := o.parts()
	return quota.NewSQLite(wiring.Tables(ledger.New(bare{db, false}).Tables()), o.QuotaKey, o.costs(), l, up, o.clock(), o.options())
}

func newPostgres(db *sql.DB, o limOpts) (*quota.Postgres, error) {
	l, up := o.parts()
	return quota.NewPostgres(wiring.Tables(ledger.New(bare{db, true}).Tables()), o.QuotaKey, o.costs(), l, up, o.clock(), o.options())
}

// bare is a bare pool as the ledger takes a database: the tests open
// several on one file, as processes do.
type bare struct {
	db *sql.DB
	pg bool
}

func (p bare) Writer() *sql.DB { return p.db }
func (p bare) Reader() *sql.DB { return p.db }
func (p bare) Postgres() bool  { return p.pg }
func (p bare) Update(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// ledgerDouble keeps what the limiter records in memory. Its Recall is the
// test's when it gave one (the test keeps its ledger itself), else what
// was recorded; its grant, the test's, else one on what Recall returns
// and the calls it granted.
type ledgerDouble struct {
	recall func(ctx context.Context) (ingest.Recalled, error)
	grant  func(ctx context.Context, decide func([]ingest.Call) (*ingest.Call, error)) error

	mu      sync.Mutex
	calls   []ingest.Call
	blocks  []ingest.Block
	granted []ingest.Call
}

func (d *ledgerDouble) RecordCall(_ context.Context, c ingest.Call) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, c)
	return nil
}

func (d *ledgerDouble) RecordBlock(_ context.Context, b ingest.Block) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.blocks = append(d.blocks, b)
	return nil
}

func (d *ledgerDouble) RecordGiveBack(context.Context, ingest.Call, time.Time) error { return nil }

func (d *ledgerDouble) Recall(ctx context.Context, _ string, _, _ time.Time) (ingest.Recalled, error) {
	if d.recall != nil {
		return d.recall(ctx)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return ingest.Recalled{Calls: append([]ingest.Call(nil), d.calls...), Blocks: append([]ingest.Block(nil), d.blocks...)}, nil
}

func (d *ledgerDouble) GrantUnmetered(ctx context.Context, key string, since time.Time, decide func([]ingest.Call) (*ingest.Call, error)) error {
	if d.grant != nil {
		return d.grant(ctx, decide)
	}
	rec, err := d.Recall(ctx, key, since, time.Now())
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := map[string]bool{}
	for _, c := range rec.Calls {
		seen[c.ID] = true
	}
	calls := rec.Calls
	for _, c := range d.granted {
		if !seen[c.ID] {
			calls = append(calls, c)
		}
	}
	c, err := decide(calls)
	if err == nil && c != nil {
		d.granted = append(d.granted, *c)
	}
	return err
}

// unknownsDouble keeps decisions of unknown outcome in memory.
type unknownsDouble struct {
	mu   sync.Mutex
	list []ingest.Unknown
}

func (u *unknownsDouble) RecordUnknown(_ context.Context, x ingest.Unknown) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.list = append(u.list, x)
	return nil
}

func (u *unknownsDouble) Unknowns(context.Context, string) ([]ingest.Unknown, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]ingest.Unknown(nil), u.list...), nil
}

func (u *unknownsDouble) ResolveUnknown(_ context.Context, x ingest.Unknown, _ *ingest.Call, _ time.Time) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i, y := range u.list {
		if y.Instance == x.Instance && y.Token == x.Token {
			u.list = append(u.list[:i], u.list[i+1:]...)
			break
		}
	}
	return nil
}
