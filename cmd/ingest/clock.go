package main

import (
	"context"
	"fmt"
	"time"

	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

// reportClock is the ledger's last reading of the upstream's clock for the
// report; nil when there is none (or no database).
func reportClock(ctx context.Context, db *store.DB) *report.Clock {
	skew, seen, ok := wiring.LastClock(ctx, db)
	if !ok {
		return nil
	}
	return &report.Clock{Skew: skew, Seen: seen}
}

// checkClock asks the upstream's time (a request without the key, which
// spends nothing) and fails when this host's clock is off by more than the
// limiter's guard: the limiter would decide nothing on it.
func checkClock(ctx context.Context, c *checkEnv) (string, error) {
	if c.offline {
		return skip("not asked: --offline calls nothing upstream")
	}
	at, err := fetch.UpstreamTime(ctx, c.s.endpoint)
	if err != nil {
		return "", runtimeError(err)
	}
	skew := at.Sub(time.Now())
	detail := fmt.Sprintf("%s (its Date header, skew %s; asked without the key: nothing spent)", report.SkewText(skew), skew.Round(time.Second))
	if skew > quota.DefaultGuard || skew < -quota.DefaultGuard {
		return "", runtimeError(fmt.Errorf("%s: more than the limiter's guard of %s, so the limiter would decide nothing; set this host's clock right (NTP)", detail, quota.DefaultGuard))
	}
	return detail, nil
}
