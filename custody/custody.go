// Package custody holds the rules that keep the quota's window spent once
// across the moves of a database between limiters and across hosts: which
// limiter holds a database's window of a quota key and every move of it,
// and the refusal of a run on another (holder.go); a host that leaves the
// peers it shared a Redis with (peers.go), and the Redis it leaves asked
// which ledgers spent (leaving.go); what keeps a copy of a database honest
// about the quota, its workers' leases and the calls each side gained after
// the copy (copied.go); and `ingest quota seed`, the window carried into the
// limiter a host moves to (seed.go).
//
// Each rule lives where its data lives: in the notes, leases and calls of a
// database's ledger. The builder (wiring) hands custody what it reads of the
// host (Rules: the clock, the pools' span, the limiter its settings name, the
// way to open a database) and keeps none of the rules itself. A refusal is an
// ingest.ConfigError naming what to type, which a command turns into exit 2.
package custody

import (
	"context"
	"log/slog"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/store"
)

// Database is one open database as custody reads it: its ledger, its runs,
// where it is, and its close; the builder opens it (Rules.Open).
type Database struct {
	Ledger *ledger.Ledger
	Runs   Runs
	Path   string
	Close  func() error
	// Learn asks the Redis at redisURL which ledgers spent in the window
	// of quotaKey, and copies its list into this database's notes, as a
	// run's end does (quota.Redis.LearnLedgers); the builder, which opens
	// that Redis, sets it. Its errors name the fix.
	Learn func(ctx context.Context, redisURL, quotaKey string) error
}

// Runs is what custody reads of a database's runs: each region's last.
type Runs interface {
	LastRuns(ctx context.Context, kind ingest.PageKind) (map[string]store.RunSummary, error)
}

// Opener opens the database dsn names: created and migrated when create
// says so, else read-only and never created.
type Opener func(ctx context.Context, dsn string, create bool) (*Database, error)

// Rules are the rules of custody as one host keeps them: what its settings
// name and what the builder hands it. Every field is required.
type Rules struct {
	DSN      string // this host's database (--db)
	RedisURL string // the Redis of its limiter, "" for the embedded one
	Here     Holder // the limiter its settings name (HolderOf)
	// RedisAt is the Redis a URL names as a Holder (RedisAt; the tests'
	// own reading where their Redis is a name).
	RedisAt func(redisURL string) Holder
	Span    time.Duration // the pools' span: how far back a window's calls count
	Clock   ingest.Clock
	Logger  *slog.Logger
	Open    Opener
}

func (r *Rules) now() time.Time { return r.Clock.Now() }

// dbName is this host's database as messages show it: never a password.
func (r *Rules) dbName() string { return store.Redact(r.DSN) }
