// Package wiring puts the parts together for the commands, and only that:
// it builds what a command runs on from a Host (the checked settings) and
// closes it in reverse order. It opens what runs on one database (--db):
// the store, the ledger the quota limiters' constructors require, the
// embedded limiter in the store's tables or the Redis one, and the API
// limiter. Which database it is (SQLite or PostgreSQL) is the store's to
// know; callers never tell by the string.
//
// From those parts it builds what the commands run: the pipeline (the
// database, the limiter and the upstream client, in that order, closed in
// reverse, with the checks before anything is spent), run's jobs and daemon
// (Host.Run, for the binary and the simulation alike: the roster, the
// pacer, the metrics, the listener and the region catalogue's keeper), the
// one site every listener serves (site.go), db copy's databases (copy.go),
// and what report and serve read. The rules it hands the parts, and what
// each says to the user, live in the rooms they are about, as
// docs/ARCHITECTURE.md's map names them. What stays here is construction,
// the order of closing, and the configuration errors that name a flag the
// part it comes from does not know.
//
// Each part is built by one function, and by no other (held by
// architecture_test.go): a database and its ledger by openDatabase and
// On, the embedded limiter by Database.Limiter, Redis's by OpenLimiter,
// the upstream's clock by Host.UpstreamClock, a pacer by newPacer, the
// site by Host.OpenSite, a damaged file's reading by Host.Salvage. A
// configuration it refuses (a Redis or PostgreSQL URL answered by another
// protocol among them) is a ConfigError, which cmd turns into exit 2. Only
// cmd (and tests) import it.
package wiring

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clients"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/store"
)

// Database is an open database with what runs on it: the store, and the
// quota's ledger in it.
type Database struct {
	*store.DB
	*ledger.Ledger
	// Where is this host and the database, for the limiter's list of
	// ledgers.
	Where string
}

// On is db with its ledger; where is this host and the database, for the
// limiter's list of ledgers ("": this host and db's path).
func On(db *store.DB, where string) *Database {
	if where == "" {
		where = store.Where(db.Path())
	}
	return &Database{DB: db, Ledger: ledger.New(db), Where: where}
}

// Store is the store of d, nil when d is: a command that reads no
// database as an empty one passes it on as such.
func (d *Database) Store() *store.DB {
	if d == nil {
		return nil
	}
	return d.DB
}

// Open opens (creating and migrating) the database dsn names.
func Open(ctx context.Context, dsn string) (*Database, error) { return openDatabase(ctx, dsn, true) }

// OpenExisting opens it for reading only (store.OpenExisting).
func OpenExisting(ctx context.Context, dsn string) (*Database, error) {
	return openDatabase(ctx, dsn, false)
}

// openDatabase is the one open of a database, with its ledger: created
// and migrated when create says so, else read-only and never created.
func openDatabase(ctx context.Context, dsn string, create bool) (*Database, error) {
	open := store.OpenExisting
	if create {
		open = store.Open
	}
	db, err := open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	return On(db, ""), nil
}

// QuotaLedger is the database as the limiters' required ledger: its id,
// where it is, and every role, so that a limiter built on it keeps every
// promise.
func (d *Database) QuotaLedger(ctx context.Context) (quota.Ledger, error) {
	id, err := d.LedgerID(ctx)
	if err != nil {
		return quota.Ledger{}, err
	}
	l := d.Ledger
	return quota.Ledger{ID: id, Where: d.Where, Record: l, Recall: l, Grant: l, Notes: l, Unknowns: l}, nil
}

// Tables are the ledger's limiter tables as the embedded limiter takes
// them.
func Tables(t ledger.Tables) quota.Tables {
	return quota.Tables{Turns: t, Clocks: t, Log: t, Pools: t, Leases: t, Ledger: t}
}

// Limiter is a limiter in every role, as the program that wires it keeps
// it; each of its parts depends on the one role it uses.
type Limiter interface {
	quota.Meter
	quota.Reporter
	quota.Operator
	quota.Locker
}

// Limiter builds the embedded limiter in the database: SQLite's for one
// host, PostgreSQL's for every host sharing it.
func (d *Database) Limiter(ctx context.Context, quotaKey string, costs *ingest.Costs, up *quota.UpstreamClock, clock ingest.Clock, o quota.Options) (Limiter, error) {
	led, err := d.QuotaLedger(ctx)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", d.Path(), err)
	}
	t := d.Tables()
	if t.Shared() {
		return quota.NewPostgres(Tables(t), quotaKey, costs, led, up, clock, o)
	}
	return quota.NewSQLite(Tables(t), quotaKey, costs, led, up, clock, o)
}

// OpenLimiter is the limiter: on Redis when client is set, with d's
// ledger (none when d is nil: a host without a database, whose limiter
// admits nothing), else the one embedded in d.
func OpenLimiter(ctx context.Context, d *Database, client redis.UniversalClient, quotaKey string, costs *ingest.Costs, up *quota.UpstreamClock, clock ingest.Clock, o quota.Options) (Limiter, error) {
	if client == nil {
		if d == nil {
			return nil, errors.New("the embedded limiter lives in the database, and there is none")
		}
		return d.Limiter(ctx, quotaKey, costs, up, clock, o)
	}
	led := quota.NoLedger()
	if d != nil {
		var err error
		if led, err = d.QuotaLedger(ctx); err != nil {
			return nil, fmt.Errorf("open database %s: %w", d.Path(), err)
		}
	}
	return quota.NewRedis(client, quotaKey, costs, led, up, clock, o)
}

// APILimiter is where the API's clients are counted without Redis: in a
// PostgreSQL database, shared by every host on it; else in this process
// (one host, one serve: a SQLite database is not written for a read).
func (d *Database) APILimiter() ratelimit.Limiter {
	if c, ok := clients.New(d.DB).Counts(); ok {
		return ratelimit.NewPostgres(c)
	}
	return ratelimit.NewMemory()
}
