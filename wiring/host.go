package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// ConfigError is a configuration this host refuses before anything is
// spent or written (ingest.ConfigError): the command exits 2 on it.
type ConfigError = ingest.ConfigError

func configErrorf(format string, args ...any) error { return ingest.ConfigErrorf(format, args...) }

// Host is what a command opens from, as its checked settings give them:
// the database (--db), the Redis of the limiter (--redis, "" for none),
// the upstream's endpoint, the costs file, and the logger.
type Host struct {
	DSN string
	// DefaultDB says DSN is the built-in default path, as neither --db nor
	// INGEST_DB named one: a database there is made by nobody's choice,
	// so it is said before it is created, refused beside a shared limiter,
	// and never read as an empty one.
	DefaultDB bool
	RedisURL  string
	Endpoint  string
	Costs     *ingest.Costs
	Logger    *slog.Logger
	Replicas  int // --redis-replicas
	// RedisHook, when set, is added to every client of RedisURL: the
	// simulation's, which sets its Redis's clock to virtual time before
	// each command, as a Redis's TIME is the limiter's clock; nil otherwise.
	RedisHook redis.Hook
	// Clock is the house's one clock, handed to every part that reads the
	// time; required: a Host without one is a programming error.
	Clock clock.Clock
	// Transport carries every request to the upstream, the keyless one
	// that reads its clock included; nil is the network. The simulation
	// answers them in its own process, where no socket would let its
	// virtual time pass.
	Transport http.RoundTripper
	// Uptime is the boot clock the limiter's guard and the upstream's
	// clock carry time on by; nil is the kernel's. Under virtual time the
	// kernel's would not move, and every step of the day would read as a
	// jump of the wall clock.
	Uptime func() (boot string, since time.Duration, ok bool)
	// Signals are the stop signals a run heeds (SIGINT, SIGTERM, SIGHUP);
	// nil is the host's own. The simulation sends its own, where one the
	// host delivered would come from outside its virtual time.
	Signals <-chan os.Signal
	// Jitter draws the upstream client's retry jitter (fetch.Options);
	// nil is math/rand's. The simulation draws it from its seed.
	Jitter func(n int64) int64
	// RefuseUnreached refuses a run on a Redis never reached since the
	// start that the database never spent on (a mistyped address looks
	// exactly like an outage); false is the operator's word that it is an
	// outage, ridden out unmetered within fail_open.
	RefuseUnreached bool

	// unreached: the Redis at RedisURL met no answer at the start.
	unreached bool

	upstream upstreamOnce
}

// signals stops ctx's run on the stop signals: Signals, or the host's.
func (h *Host) signals(ctx context.Context) (context.Context, <-chan struct{}, func()) {
	if h.Signals != nil {
		return jobs.SignalsOn(ctx, h.Logger, h.Signals)
	}
	return jobs.Signals(ctx, h.Logger)
}

// now is the house clock's time.
func (h *Host) now() time.Time { return h.clock().Now() }

// clock is the house's clock.
func (h *Host) clock() clock.Clock {
	if h.Clock == nil {
		panic("wiring: Host.Clock is required: the house's clock")
	}
	return h.Clock
}

// uptime is the boot clock: Uptime, or the kernel's.
func (h *Host) uptime() func() (string, time.Duration, bool) {
	if h.Uptime != nil {
		return h.Uptime
	}
	return quota.KernelUptime
}

// DBName is the database as messages and logs show it: a URL without its
// password.
func (h *Host) DBName() string { return store.Redact(h.DSN) }

// DBExists says whether the database is there: a file, or a PostgreSQL
// server (whose schema the store checks when it opens).
func (h *Host) DBExists() bool { return store.Exists(h.DSN) }

// OpenStore opens (creating and migrating) the database.
func (h *Host) OpenStore(ctx context.Context) (*Database, error) {
	if err := h.creating(); err != nil {
		return nil, err
	}
	db, err := Open(ctx, h.DSN)
	if err != nil {
		return nil, store.OpenRefused(err)
	}
	return db, nil
}

// OpenExisting opens the database for reading; one that does not exist
// yet is a store.NoneYetError (which matches store.ErrNoDatabase).
func (h *Host) OpenExisting(ctx context.Context) (*Database, error) {
	db, err := OpenExisting(ctx, h.DSN)
	if errors.Is(err, store.ErrNoDatabase) && h.DefaultDB {
		return nil, h.noDefault()
	}
	if errors.Is(err, store.ErrNoDatabase) {
		return nil, store.NoneYetError{DB: h.DBName()}
	}
	if err != nil {
		return nil, store.OpenRefused(err)
	}
	return db, nil
}

// OpenIfAny opens the database for reading, never creating it; nil (and
// no error) when there is none yet at a path the operator named.
func (h *Host) OpenIfAny(ctx context.Context) (*Database, error) {
	db, err := OpenExisting(ctx, h.DSN)
	switch {
	case errors.Is(err, store.ErrNoDatabase) && h.DefaultDB:
		return nil, h.noDefault()
	case errors.Is(err, store.ErrNoDatabase):
		return nil, nil
	case err != nil:
		return nil, store.OpenRefused(err)
	}
	return db, nil
}

// OpenForLimiter opens the database the limiter's commands read (its
// ledger names the quota key) and, for write with the embedded limiter,
// keep their settings in: created for write, none (nil) on Redis when
// there is none yet.
func (h *Host) OpenForLimiter(ctx context.Context, write bool) (*Database, error) {
	open := OpenExisting
	if write && h.RedisURL == "" {
		if err := h.creating(); err != nil {
			return nil, err
		}
		open = Open
	}
	db, err := open(ctx, h.DSN)
	switch {
	case errors.Is(err, store.ErrNoDatabase) && h.RedisURL != "":
		return nil, nil
	case err != nil:
		return nil, store.OpenRefused(err)
	}
	return db, nil
}

// creating says where a database at the default path is about to be
// created, and refuses it beside a shared limiter: there a database made
// by mistake spends the shared quota as a ledger the other hosts neither
// know nor can restore, and shares the quota out to one more worker.
func (h *Host) creating() error {
	if !h.DefaultDB || h.DBExists() {
		return nil
	}
	at := h.DSN
	if abs, err := filepath.Abs(h.DSN); err == nil {
		at = abs
	}
	if h.RedisURL != "" {
		return configErrorf("--db / INGEST_DB: neither is set, and a shared limiter is (--redis / REDIS_URL): "+
			"refusing to create a database at the default path %s; set --db / INGEST_DB to this host's database", at)
	}
	h.Logger.Warn("creating the database at the default path, as neither --db nor INGEST_DB is set", "db", at)
	return nil
}

// noDefault refuses a read of a database at the default path that is not
// there: read as an empty one, it would say nothing was ever stored.
func (h *Host) noDefault() error {
	at := h.DSN
	if abs, err := filepath.Abs(h.DSN); err == nil {
		at = abs
	}
	return configErrorf("--db / INGEST_DB: neither is set, and there is no database at the default path %s: set --db / INGEST_DB to the database to read", at)
}

// OpenLimiter builds the Redis limiter when RedisURL is set, else the
// embedded one in the database (OpenLimiter). closeFn releases the Redis
// client. db may be nil with Redis (a host without a database).
func (h *Host) OpenLimiter(db *Database, quotaKey string) (l Limiter, closeFn func(), err error) {
	return h.openLimiter(db, quotaKey, h.Costs)
}

// openLimiter is OpenLimiter by costs c.
func (h *Host) openLimiter(db *Database, quotaKey string, c *ingest.Costs) (l Limiter, closeFn func(), err error) {
	opts := quota.Options{Logger: h.Logger, Replicas: h.Replicas, Uptime: h.uptime(), Delivery: ingest.Delivery}
	up := quota.NoUpstreamClock
	if db != nil {
		up = h.UpstreamClock(db)
	}
	var client redis.UniversalClient
	closeFn = func() {}
	if h.RedisURL != "" {
		if client, err = h.RedisClient(); err != nil {
			return nil, nil, err
		}
		if err := h.RedisAccess(context.Background(), client); err != nil {
			client.Close()
			return nil, nil, err
		}
		closeFn = func() { client.Close() }
	}
	if l, err = OpenLimiter(context.Background(), db, client, quotaKey, c, up, h.clock(), opts); err != nil {
		closeFn()
		return nil, nil, err
	}
	return l, closeFn, nil
}

// APILimiter is where the API's clients are counted: on Redis when
// RedisURL is set, shared by every serve on it; else where the database
// keeps them (Database.APILimiter). The func releases what it opened.
func (h *Host) APILimiter(db *Database) (ratelimit.Limiter, func(), error) {
	if h.RedisURL != "" {
		client, err := h.RedisClient()
		if err != nil {
			return nil, nil, err
		}
		l := ratelimit.NewRedis(client, quota.DefaultTimeout)
		return l, func() { l.Close(); client.Close() }, nil
	}
	return db.APILimiter(), func() {}, nil
}

// EndpointName is YOUTUBE_ENDPOINT as messages show it (fetch.EndpointName).
func (h *Host) EndpointName() string { return fetch.EndpointName(h.Endpoint) }

// upstreamOnce holds the UpstreamClock of the database a command opened
// (a command such as check opens more than one, one after the other).
type upstreamOnce struct {
	mu sync.Mutex
	db *Database
	c  *quota.UpstreamClock
}

// UpstreamClock is the upstream's clock as this process keeps it in the
// ledger's notes: the limiter's guard asks it, and every response of the
// upstream tells it (OpenPipeline).
func (h *Host) UpstreamClock(db *Database) *quota.UpstreamClock {
	h.upstream.mu.Lock()
	defer h.upstream.mu.Unlock()
	if h.upstream.c == nil || h.upstream.db != db {
		h.upstream.db = db
		h.upstream.c = quota.NewUpstreamClock(h.clock(), quota.UpstreamOptions{Notes: db.Ledger, Uptime: h.uptime(),
			Ask: func(ctx context.Context) (time.Time, error) {
				return fetch.UpstreamTimeVia(ctx, h.Endpoint, h.Transport)
			}})
	}
	return h.upstream.c
}

// LastClock is the ledger's last reading of the upstream's clock, as the
// report shows it: its skew and when it was seen; nil when there is none
// (or no database).
func (h *Host) LastClock(ctx context.Context, db *Database) *report.Clock {
	if db == nil {
		return nil
	}
	r, ok, err := h.UpstreamClock(db).Last(ctx)
	if err != nil || !ok {
		return nil
	}
	return &report.Clock{Skew: r.Skew(), Seen: r.At}
}

// OpenServeDB opens an existing database for writing, which the tokens'
// last use and, on PostgreSQL without Redis, the API's limiter need. When the limiter does not live in it, a database that cannot
// be written (a read-only volume) is opened read-only, and readOnly says
// why: tokens' last use then goes unrecorded.
func (h *Host) OpenServeDB(ctx context.Context) (db *Database, readOnly, err error) {
	if db, err = Open(ctx, h.DSN); err == nil {
		return db, nil, nil
	}
	ro, rerr := OpenExisting(ctx, h.DSN)
	var older *store.VersionError
	switch {
	case errors.As(rerr, &older) && older.Have < older.Want:
		// A role that may not change the schema (the public replicas')
		// cannot upgrade it: the fix is the upgrade, by another role.
		return nil, nil, &ConfigError{Err: fmt.Errorf("--db (INGEST_DB) %v (upgrading it as this user failed: %v)", older, err)}
	case rerr != nil:
		return nil, nil, store.OpenRefused(err)
	}
	if ro.Postgres() && h.RedisURL == "" {
		ro.Close()
		return nil, nil, store.OpenRefused(fmt.Errorf("%w (without REDIS_URL, the API's limiter lives in the PostgreSQL database, so serve writes it)", err))
	}
	return ro, err, nil
}

// ReadQuotaKey is the quota a command that reads reports on
// (ledger.ReadQuotaKey): given, else apiKey's hash, else the one key in
// db's ledger (db nil: none).
func (h *Host) ReadQuotaKey(ctx context.Context, given, apiKey string, db *Database) (string, error) {
	var l *ledger.Ledger
	if db != nil {
		l = db.Ledger
	}
	return ledger.ReadQuotaKey(ctx, given, apiKey, l, h.RedisURL != "")
}
