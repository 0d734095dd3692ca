package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
)

// upstreamOnce holds the UpstreamClock of the database a command opened
// (a command such as check opens more than one, one after the other).
type upstreamOnce struct {
	mu sync.Mutex
	db *store.DB
	c  *quota.UpstreamClock
}

// upstreamClock is the upstream's clock as this process keeps it in the
// ledger's notes: the limiter's guard asks it, and every response of the
// upstream tells it (openPipeline).
func (s *settings) upstreamClock(db *store.DB) *quota.UpstreamClock {
	s.clock.mu.Lock()
	defer s.clock.mu.Unlock()
	if s.clock.c == nil || s.clock.db != db {
		s.clock.db = db
		s.clock.c = quota.NewUpstreamClock(quota.UpstreamOptions{Notes: db,
			Ask: func(ctx context.Context) (time.Time, error) { return fetch.UpstreamTime(ctx, s.endpoint) }})
	}
	return s.clock.c
}

// sawDate is fetch's OnDate: the reading goes to the ledger.
func (s *settings) sawDate(up *quota.UpstreamClock) func(context.Context, time.Time) {
	return func(ctx context.Context, at time.Time) {
		if err := up.Saw(context.WithoutCancel(ctx), at); err != nil {
			s.logger.Warn("keep the upstream's time in the ledger", ingest.LogErr, err)
		}
	}
}

// reportClock is the ledger's last reading of the upstream's clock for the
// report; nil when there is none (or no database).
func reportClock(ctx context.Context, db *store.DB) *report.Clock {
	if db == nil {
		return nil
	}
	seen, ok, err := quota.NewUpstreamClock(quota.UpstreamOptions{Notes: db}).Last(ctx)
	if err != nil || !ok {
		return nil
	}
	return &report.Clock{Skew: seen.Skew(), Seen: seen.At}
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
