// Package wiring puts the parts together for the commands. It opens what
// runs on one database (--db): the store, the ledger the quota limiters'
// constructors require, the embedded limiter in the store's tables or the
// Redis one, and the API limiter. Which database it is (SQLite or
// PostgreSQL) is the store's to know; callers never tell by the string.
//
// From those parts it builds what the commands run: the pipeline (the
// database, the limiter and the upstream client, with the checks before
// anything is spent), run's jobs and daemon (the roster, the pacer, the
// metrics, the listener and the region catalogue's keeper), serve's site,
// the checks of ingest check, the quota's configuration (apply, restore,
// seed), which limiter holds each database's window and the refusal of a
// run on another, the standing's prune and the report's sources. A
// configuration it refuses (a Redis or PostgreSQL URL answered by another
// protocol among them) is a ConfigError.
//
// Each part is built by one function, and by no other (held by
// architecture_test.go): a database and its ledger by openDatabase and
// On, the embedded limiter by Database.Limiter, Redis's by OpenLimiter,
// the upstream's clock by Host.UpstreamClock, a pacer by newPacer, the
// site by Host.OpenSite, a damaged file's reading by Host.Salvage.
//
// What is where: the one place below cmd that opens what a command runs on:
// the store, the ledger on it and as the limiters' constructors require it,
// the embedded limiter in its tables (SQLite's or PostgreSQL's, as the store
// says) or the Redis one, the API limiter; a Host (the checked settings)
// opens the database (OpenStore, OpenExisting, serve's OpenServeDB), the
// limiter (OpenLimiter, APILimiter), the Redis client and its access check
// (redis.go: the URL's credentials and database, found by one round trip),
// the upstream's clock, and the Pipeline (database, limiter, client, in that
// order, closed in reverse, with the checks before anything is spent); the
// pacer's construction (NewPacer), the standing's prune and gate (Terms), a
// worker's lease on its database, a copy refused while one is in force
// (LiveError) and the calls a copy's source gained after it, counted by the
// copy's workers, and a copy's calls, counted by the source's workers after
// it (copied.go), which limiter holds a database's window of a quota key
// and each move of it, and the refusal of a run on another (holder.go),
// quota apply's, restore's and seed's work (seed.go: the
// window carried into the limiter a host moves to, and the /readyz check of
// a limiter that cannot tell a new Redis from a wiped one; leaving.go: the
// Redis a seed back leaves asked for every ledger that spent) and what quota
// show prints of a Redis limiter after its pools (StatusText: its ledgers,
// what a recovery waits for), the quota key a reading command reports on,
// the checks of ingest check that look at what a run opens, their order and
// their lines (Checks, Checks.List, Checks.Run); what run does once its
// flags are checked (Host.Run, for the binary and the simulation alike: the plan,
// the pipeline, the gate, the passes, tracking, pruning and refresh,
// --listen's server, once or as a daemon until a signal); what report and
// serve read (Schedule, ReadLimiter, BuildReport, LastClock), the plan a
// pacing worker would follow when none is published (Planner: the one place
// a pacer is built for a view), the day's plan a run prints, checks and
// records with its schedule and costs (plan.go: Prepare, which also reads
// --regions once against the catalogue the database keeps), the one site
// every listener serves, serve's and run --listen's alike, with its API
// meter, readiness checks, /quota and /metrics (site.go: OpenSite; serve's
// OpenWeb and Serve), whose report keeps its ledger reads and the embedded
// limiter's state while the ledger's stamp (its write counter) stays the
// same, and reads the ledger's calls through a follower after a change
// (remember.go). A configuration it refuses is a ConfigError, which cmd
// turns into exit 2. Only cmd (and tests) import it.
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
