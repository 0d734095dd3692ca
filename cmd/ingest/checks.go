package main

// The checks of `ingest check` that look at what a run would open: the
// costs file, the database, the limiter, the host's clock, the limiter's
// agreement with the costs file, and the key (one call through both).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// errSkipped is a check that could not run; its detail says why (skip
// builds both).
var errSkipped = errors.New("skipped")

// skip is a check's answer when it cannot run: why, and what would let it.
func skip(format string, args ...any) (string, error) {
	return fmt.Sprintf(format, args...), errSkipped
}

// checks is what the checks share: what the command was given, and what
// earlier checks found. Each check returns the detail of its line, or an
// error that fails it (a ConfigError for a configuration).
type checks struct {
	Host      *wiring.Host
	Offline   bool   // --offline: call nothing upstream
	APIKey    string // "" when YOUTUBE_API_KEY is not set
	QuotaKey  string
	CostsFile string // --costs, "" for the built-in one
	// Opened is told of each database a check opens (the terms' warning).
	Opened func(context.Context, *wiring.Database)
	// DBState is what the database check found: store.Missing,
	// store.Current or store.Older.
	DBState string
	// Failed names the checks that failed so far.
	Failed map[string]bool
	// Words are the report's words for a window, a skew and units by
	// pool, so that check says them as report does.
	Words struct {
		Window, Skew func(time.Duration) string
		Units        func(map[string]int64) string
	}
}

// Costs says which costs file is read, and its pools.
func (c *checks) Costs(context.Context) (string, error) {
	src := "the built-in costs.yaml"
	if c.CostsFile != "" {
		src = c.CostsFile
	}
	var pools []string
	for _, p := range c.Host.Costs.Pools {
		pools = append(pools, fmt.Sprintf("%s %d-%d/%s", p.Name, p.Limit, p.Reserve, c.Words.Window(p.Window)))
	}
	return fmt.Sprintf("%s: pools %s; %d operations priced", src, strings.Join(pools, ", "), len(c.Host.Costs.Operations)), nil
}

// Database looks at the database without creating or writing it.
func (c *checks) Database(ctx context.Context) (string, error) {
	state, detail, err := store.Inspect(ctx, c.Host.DSN, c.Host.Clock.Now())
	c.DBState = state
	var pe *store.PathError
	if errors.Is(err, ingest.ErrDamaged) {
		return "", err // the file, not the settings: exit 1
	}
	if errors.As(err, &pe) {
		return "", ingest.ConfigErrorf("--db (INGEST_DB) %v", pe)
	}
	return detail, err
}

// checkedLimiter is what the checks ask of the limiter: its pools, and
// whether it holds this costs file's.
type checkedLimiter interface {
	State(ctx context.Context) ([]ingest.PoolState, error)
	Backend() string
	CheckConfig(ctx context.Context) error
}

// limiter opens the limiter the checks ask, on the database when there is
// one; closeFn closes both.
func (c *checks) limiter(ctx context.Context) (l checkedLimiter, closeFn func(), err error) {
	var db *wiring.Database
	if c.DBState == store.Current {
		if db, err = c.Host.OpenExisting(ctx); err != nil {
			return nil, nil, err
		}
		if c.Opened != nil {
			c.Opened(ctx, db)
		}
	}
	l, closeLimiter, err := c.Host.OpenLimiter(db, c.QuotaKey)
	if err != nil {
		if db != nil {
			db.Close()
		}
		return nil, nil, err
	}
	return l, func() {
		closeLimiter()
		if db != nil {
			db.Close()
		}
	}, nil
}

// Limiter asks the limiter for its pools, as report does.
func (c *checks) Limiter(ctx context.Context) (string, error) {
	if c.Failed["database"] {
		return skip("not asked: the database check failed, and the limiter reads it")
	}
	if c.QuotaKey == "" {
		return skip("not asked: no quota key to ask about (set YOUTUBE_API_KEY, or INGEST_QUOTA_KEY)")
	}
	if c.DBState != store.Current && c.Host.RedisURL == "" {
		return "embedded in the database: nothing to ask until the first run creates it", nil
	}
	return c.withLimiter(ctx, func(ctx context.Context, l checkedLimiter) (string, error) {
		states, err := l.State(ctx)
		if err != nil && c.Host.RedisURL != "" && quota.Unreached(err) {
			_, addr := quota.Address(c.Host.RedisURL)
			return "", fmt.Errorf("%s limiter: nothing answers at %s (%w): check the host and port of --redis / REDIS_URL; "+
				"a run refuses to spend beside a Redis it never reached that its database never spent on, unless --limiter-unreached-ok says it is an outage",
				l.Backend(), addr, err)
		}
		if err != nil {
			return "", fmt.Errorf("%s limiter: %w", l.Backend(), err)
		}
		var parts []string
		for _, st := range states {
			parts = append(parts, fmt.Sprintf("%s %d left", st.Pool, st.Remaining))
		}
		line := fmt.Sprintf("%s answers: %s", c.limiterName(l.Backend()), strings.Join(parts, ", "))
		if c.DBState != store.Current {
			// Built with quota.NoUpstreamClock and quota.NoLedger: it admits
			// nothing, and no database keeps the upstream's readings.
			line += "; without the upstream's clock and a ledger until the first run creates the database (it admits nothing)"
		}
		return line, nil
	})
}

// limiterName says which limiter the settings chose, and who shares it.
// withLimiter runs fn on the limiter a check opens, within the check's
// time, and closes it.
func (c *checks) withLimiter(ctx context.Context, fn func(context.Context, checkedLimiter) (string, error)) (string, error) {
	l, closeLimiter, err := c.limiter(ctx)
	if err != nil {
		return "", err
	}
	defer closeLimiter()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return fn(ctx, l)
}

func (c *checks) limiterName(backend string) string {
	switch {
	case c.Host.RedisURL != "":
		return backend + " (REDIS_URL)"
	case backend == "postgres":
		return "postgres (embedded in the database, shared by every host on it)"
	}
	return backend + " (embedded in the database, one host)"
}

// Clock asks the upstream's time (a request without the key, which
// spends nothing) and fails when this host's clock is off by more than the
// limiter's guard: the limiter would decide nothing on it.
func (c *checks) Clock(ctx context.Context) (string, error) {
	if c.Offline {
		return skip("not asked: --offline calls nothing upstream")
	}
	at, err := fetch.UpstreamTime(ctx, c.Host.Endpoint)
	if jobs.Unreachable(err) {
		endpoint := c.Host.EndpointName()
		return "", fmt.Errorf("the upstream (%s) cannot be reached to read its clock: %s; check --youtube-endpoint / YOUTUBE_ENDPOINT "+
			"and the network, or use check --offline on a host with no way out", endpoint, jobs.Cause(err))
	}
	if err != nil {
		return "", err
	}
	skew := at.Sub(c.Host.Clock.Now())
	detail := fmt.Sprintf("%s (its Date header, skew %s; asked at no quota cost: %s)", c.Words.Skew(skew), skew.Round(time.Second), quota.DateRequest)
	if skew > quota.DefaultGuard || skew < -quota.DefaultGuard {
		return "", fmt.Errorf("%s: more than the limiter's guard of %s, so the limiter would decide nothing; set this host's clock right (NTP), "+
			"unless YOUTUBE_ENDPOINT is a proxy that answers with a cached Date", detail, quota.DefaultGuard)
	}
	return detail + c.recordedClock(ctx, skew), nil
}

// recordedClock says when the ledger's recorded reading of the upstream's
// clock disagrees with its answer now: the limiter's guard reads the
// recorded one until a refusal asks again.
func (c *checks) recordedClock(ctx context.Context, skew time.Duration) string {
	if c.DBState != store.Current {
		return ""
	}
	db, err := wiring.OpenExisting(ctx, c.Host.DSN)
	if err != nil {
		return ""
	}
	defer db.Close()
	last := c.Host.LastClock(ctx, db)
	if last == nil || (last.Skew-skew).Abs() <= quota.DefaultGuard {
		return ""
	}
	return fmt.Sprintf("; the ledger's recorded reading (skew %s, seen %s) disagrees with it: the next decision asks again and replaces it (`ingest quota clock` shows it, `%s` lifts it now)",
		last.Skew.Round(time.Second), last.Seen.UTC().Format(time.RFC3339), quota.ForgetCommand)
}

// Agreement: the limiter holds the same pools as this costs file. A Redis
// that holds none for a key this ledger never spent on fails, naming what
// creates it, as the first run would.
func (c *checks) Agreement(ctx context.Context) (string, error) {
	switch {
	case c.Failed["database"]:
		return skip("not compared: the database check failed")
	case c.Failed["limiter"]:
		return skip("not compared: the limiter check failed")
	case c.QuotaKey == "":
		return skip("not compared: no quota key (set YOUTUBE_API_KEY, or INGEST_QUOTA_KEY)")
	case c.DBState != store.Current && c.Host.RedisURL == "":
		return "embedded: the first run writes this costs file's pools into the database", nil
	}
	return c.withLimiter(ctx, func(ctx context.Context, l checkedLimiter) (string, error) {
		var cerr *quota.ConfigError
		if err := l.CheckConfig(ctx); errors.As(err, &cerr) {
			return "", &wiring.ConfigError{Err: err}
		} else if err != nil {
			return "", err
		}
		detail := "the limiter holds this costs file's pools (or none yet: the first run writes them)"
		if r, ok := l.(*quota.Redis); ok {
			var err error
			if detail, err = r.Readiness(ctx); errors.Is(err, quota.ErrNotApplied) {
				return "", &wiring.ConfigError{Err: err}
			} else if err != nil {
				return "", err
			}
		}
		return detail, nil
	})
}

// Key makes one cheap call with the key (ingest.FetchCheck), through the
// limiter and the ledger like any call.
func (c *checks) Key(ctx context.Context) (string, error) {
	switch {
	case c.Offline:
		return skip("not called: --offline spends nothing")
	case c.APIKey == "":
		return skip("not called: YOUTUBE_API_KEY is not set")
	case c.Failed["database"] || c.Failed["limiter"] || c.Failed["agreement"]:
		return skip("not called: the call would go through the limiter, whose check failed")
	case c.DBState == store.Missing:
		return skip("not called on a new host: the call spends 1 unit, every unit spent is written to the database's ledger, "+
			"and check creates no database (%s). To check the key, run `%s`: its first call checks it "+
			"(a refused key exits 1 naming YOUTUBE_API_KEY); check then calls it too", c.Host.DBName(), keyCheckRun)
	}
	p, err := c.Host.OpenPipeline(ctx, c.APIKey, c.QuotaKey)
	if err != nil {
		return "", err
	}
	defer p.Close()
	gate := jobs.Gate(p.Limiter, p.QuotaKey, "US")
	cats, err := p.Source.Categories(ctx, gate, "US", "")
	var refused *ingest.RefusedError
	switch {
	case errors.As(err, &refused):
		return "", fmt.Errorf("not tested: the limiter has no room (%w)", err)
	case err != nil:
		return "", err
	}
	cost, _ := costs.PerFetch(c.Host.Costs, ingest.FetchCheck)
	return fmt.Sprintf("accepted: %s for US answered %d categories (units: %s)", ingest.OpCategoriesList, len(cats), c.Words.Units(cost)), nil
}
