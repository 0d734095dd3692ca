package main

// The checks of the quota: the limiter answers, it holds this costs file's
// pools, and the key is accepted (one call through both).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// checkedLimiter is what the checks ask of the limiter: its pools, and
// whether it holds this costs file's.
type checkedLimiter interface {
	report.StateReader
	CheckConfig(ctx context.Context) error
}

// limiter opens the limiter the checks ask, on the database when there is
// one; closeFn closes both.
func (c *checkEnv) limiter(ctx context.Context) (l checkedLimiter, closeFn func(), err error) {
	var db *store.DB
	if c.dbState == store.Current {
		if db, err = openExisting(ctx, c.s); err != nil {
			return nil, nil, err
		}
	}
	l, closeLimiter, err := c.s.openLimiter(db, c.quotaKey)
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

// checkLimiter asks the limiter for its pools, as report does.
func checkLimiter(ctx context.Context, c *checkEnv) (string, error) {
	if c.failed["database"] {
		return skip("not asked: the database check failed, and the limiter reads it")
	}
	if c.quotaKey == "" {
		return skip("not asked: no quota key to ask about (set YOUTUBE_API_KEY, or INGEST_QUOTA_KEY)")
	}
	if c.dbState != store.Current && c.s.redisURL == "" {
		return "embedded in the database: nothing to ask until the first run creates it", nil
	}
	l, closeLimiter, err := c.limiter(ctx)
	if err != nil {
		return "", err
	}
	defer closeLimiter()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	states, err := l.State(ctx)
	if err != nil {
		return "", runtimeError(fmt.Errorf("%s limiter: %w", l.Backend(), err))
	}
	var parts []string
	for _, st := range states {
		parts = append(parts, fmt.Sprintf("%s %d left", st.Pool, st.Remaining))
	}
	line := fmt.Sprintf("%s answers: %s", limiterName(c.s, l.Backend()), strings.Join(parts, ", "))
	if c.dbState != store.Current {
		// Built with quota.NoUpstreamClock and quota.NoLedger: it admits
		// nothing, and no database keeps the upstream's readings.
		line += "; without the upstream's clock and a ledger until the first run creates the database (it admits nothing)"
	}
	return line, nil
}

// limiterName says which limiter the settings chose, and who shares it.
func limiterName(s *settings, backend string) string {
	switch {
	case s.redisURL != "":
		return backend + " (REDIS_URL)"
	case backend == "postgres":
		return "postgres (embedded in the database, shared by every host on it)"
	}
	return backend + " (embedded in the database, one host)"
}

// checkAgreement: the limiter holds the same pools as this costs file
// (promise 10). A Redis that holds none for a key this ledger never spent
// on fails, naming what creates it, as the first run would.
func checkAgreement(ctx context.Context, c *checkEnv) (string, error) {
	switch {
	case c.failed["database"]:
		return skip("not compared: the database check failed")
	case c.failed["limiter"]:
		return skip("not compared: the limiter check failed")
	case c.quotaKey == "":
		return skip("not compared: no quota key (set YOUTUBE_API_KEY, or INGEST_QUOTA_KEY)")
	case c.dbState != store.Current && c.s.redisURL == "":
		return "embedded: the first run writes this costs file's pools into the database", nil
	}
	l, closeLimiter, err := c.limiter(ctx)
	if err != nil {
		return "", err
	}
	defer closeLimiter()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var cerr *quota.ConfigError
	if err := l.CheckConfig(ctx); errors.As(err, &cerr) {
		return "", usageErrorf("%w", err)
	} else if err != nil {
		return "", runtimeError(err)
	}
	detail := "the limiter holds this costs file's pools (or none yet: the first run writes them)"
	if r, ok := l.(*quota.Redis); ok {
		if detail, err = r.Readiness(ctx); errors.Is(err, quota.ErrNotApplied) {
			return "", usageErrorf("%w", err)
		} else if err != nil {
			return "", runtimeError(err)
		}
	}
	return detail, nil
}

// keyCheckRun is the command that checks the key on a new host, as check
// and the README give it.
const keyCheckRun = "ingest run --once --regions US"

// checkKey makes one cheap call with the key (ingest.FetchCheck), through
// the limiter and the ledger like any call.
func checkKey(ctx context.Context, c *checkEnv) (string, error) {
	switch {
	case c.offline:
		return skip("not called: --offline spends nothing")
	case c.apiKey == "":
		return skip("not called: YOUTUBE_API_KEY is not set")
	case c.failed["database"] || c.failed["limiter"] || c.failed["agreement"]:
		return skip("not called: the call would go through the limiter, whose check failed")
	case c.dbState == store.Missing:
		return skip("not called on a new host: the call spends 1 unit, every unit spent is written to the database's ledger, "+
			"and check creates no database (%s). To check the key, run `%s`: its first call checks it "+
			"(a refused key exits 1 naming YOUTUBE_API_KEY); check then calls it too", c.s.dbName(), keyCheckRun)
	}
	p, err := openPipeline(ctx, c.s)
	if err != nil {
		return "", err
	}
	defer p.Close()
	gate := jobs.Gate(p.Limiter, p.QuotaKey, "US")
	cats, err := p.Source.Categories(ctx, gate, "US")
	var refused *ingest.RefusedError
	switch {
	case errors.As(err, &refused):
		return "", runtimeError(fmt.Errorf("not tested: the limiter has no room (%w)", err))
	case err != nil:
		return "", runtimeError(err)
	}
	cost, _ := costs.PerFetch(c.s.costs, ingest.FetchCheck)
	return fmt.Sprintf("accepted: %s for US answered %d categories (units: %s)", ingest.OpCategoriesList, len(cats), report.PoolUnits(cost)), nil
}
