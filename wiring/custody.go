package wiring

// The rules of custody (package custody) handed what they read of this
// host: its settings, its clock, the pools' span and the way a database is
// opened here. Nothing here decides: each function hands custody its parts.

import (
	"context"
	"errors"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/quota"
)

// LiveError is a copy's source a worker is still writing (custody.LiveError).
type LiveError = custody.LiveError

// rules are the rules of custody as this host keeps them.
func (h *Host) rules() *custody.Rules {
	return &custody.Rules{DSN: h.DSN, RedisURL: h.RedisURL, Here: custody.HolderOf(h.RedisURL), RedisAt: custody.RedisAt,
		Span: h.Costs.Span(), Clock: h.clock(), Logger: h.Logger, Open: h.lend}
}

// lend opens the database at path for custody; this host's own, created,
// is opened as OpenStore opens it, so that its errors read the same.
func (h *Host) lend(ctx context.Context, path string, create bool) (*custody.Database, error) {
	open := func(ctx context.Context) (*Database, error) { return openDatabase(ctx, path, create) }
	if path == h.DSN && create {
		open = h.OpenStore
	}
	d, err := open(ctx)
	if err != nil {
		return nil, err
	}
	return h.lent(d), nil
}

// lent is d as custody reads it, with the Redis a seed leaves asked on it.
func (h *Host) lent(d *Database) *custody.Database {
	cd := d.custody()
	cd.Learn = func(ctx context.Context, raw, key string) error { return h.learnLedgers(ctx, d, raw, key) }
	return cd
}

// custody is d as custody reads it.
func (d *Database) custody() *custody.Database {
	return &custody.Database{Ledger: d.Ledger, Runs: d.DB, Path: d.Path(), Close: d.Close}
}

// learnLedgers opens the Redis at raw, the one a quota seed back to the
// embedded limiter leaves, and copies its list of the ledgers that spent
// in the window of key into d's notes (quota.Redis.LearnLedgers).
func (h *Host) learnLedgers(ctx context.Context, d *Database, raw, key string) error {
	c, err := quota.Dial(raw, custody.LeavingFlag)
	if err != nil {
		return err
	}
	defer c.Close()
	var ae *quota.AccessError
	if err := quota.CheckAccess(ctx, c); errors.As(err, &ae) {
		return configErrorf("%s: %s: %w", custody.LeavingFlag, ingest.Redact(raw), ae)
	}
	l, err := OpenLimiter(ctx, d, c, key, h.Costs, quota.NoUpstreamClock, h.clock(), quota.Options{Logger: h.Logger})
	if err != nil {
		return err
	}
	if err := l.(*quota.Redis).LearnLedgers(ctx); err != nil {
		return custody.UnknownLedgers(raw, key, err)
	}
	return nil
}

// Apply applies this costs file's pools on the limiter of key
// (custody.Rules.Apply).
func (h *Host) Apply(ctx context.Context, l custody.Configured, key string, isNew bool, others []string) ([]quota.ConfigChange, error) {
	return h.rules().Apply(ctx, l, key, isNew, others)
}

// Restore gives a Redis limiter back the calls of key in the ledgers of
// the databases paths (custody.Rules.Restore).
func (h *Host) Restore(ctx context.Context, l custody.Configured, key string, paths []string, acceptMissing bool) (custody.Restored, error) {
	return h.rules().Restore(ctx, l, key, paths, acceptMissing)
}

// Seed gives the limiter of key the calls of the window in the ledgers of
// the databases paths (custody.Rules.Seed).
func (h *Host) Seed(ctx context.Context, l custody.Configured, key string, paths []string, lv custody.Leaving) (calls, ledgers int, err error) {
	return h.rules().Seed(ctx, l, key, paths, lv)
}

// Working is what a command that spends does before its first call
// (custody.Rules.Working): on a copy, the limiter it spends through asks
// the copy's guard before and after each call (leashed).
func (h *Host) Working(ctx context.Context, p *Pipeline) (release func(), err error) {
	release, guard, err := h.rules().Working(ctx, p.DB.custody(), p.Limiter.Backend() == "redis", p.QuotaKey)
	if err == nil && guard != nil {
		p.Limiter = leashed{Limiter: p.Limiter, quotaKey: p.QuotaKey, guard: guard}
	}
	return release, err
}

// leashed is a copy's worker's limiter (custody.Leashed).
type leashed struct {
	Limiter
	quotaKey string
	guard    func(context.Context) error
}

func (l leashed) Take(ctx context.Context, by ingest.Caller, op string) (ingest.Decision, error) {
	return custody.Leashed(ctx, l.Limiter, l.quotaKey, l.guard, by, op)
}

// Live is a *LiveError when a worker holds or renewed its lease on db
// (custody.Live).
func Live(ctx context.Context, db *Database) error { return custody.Live(ctx, db.custody()) }
