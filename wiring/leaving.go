package wiring

// A host leaving a Redis key for its embedded limiter (quota seed without
// REDIS_URL) learns every ledger that spent in the window from the limiter
// it leaves, not only those its own copy of the limiter's list names: a
// host that first spent after this one's last contact with Redis is in no
// copy it holds, and the embedded limiter would spend its calls again
// (docs/operations/growing.md).

import (
	"context"
	"errors"
	"slices"

	"github.com/ingestworks/ingest/internal/dsn"
	"github.com/ingestworks/ingest/quota"
)

// Leaving is what quota seed back to the embedded limiter is told of the
// Redis the database leaves.
type Leaving struct {
	RedisURL string   // --leaving-redis: that Redis, asked which ledgers spent in the window
	Gone     bool     // --leaving-redis-gone: it cannot be asked; the ledgers given are every host's
	Forget   []string // --forget-peers: ledger ids it starts without
}

// How messages name the flags of Leaving.
const (
	leavingFlag = "--leaving-redis / INGEST_QUOTA_SEED_LEAVING_REDIS"
	goneFlag    = "--leaving-redis-gone"
)

// leave refuses quota seed back to the embedded limiter on db, before it
// takes any call, while a ledger that spent in the window on the Redis db
// leaves is neither given (the ledgers ids) nor forgotten; when db's
// window lives in a Redis, that Redis is asked first.
func (h *Host) leave(ctx context.Context, db *Database, key string, lv Leaving, given []string) error {
	if lv.RedisURL != "" && lv.Gone {
		return configErrorf("%s and %s: give one: the Redis left, or the word that it cannot be asked", leavingFlag, goneFlag)
	}
	held, err := recordedHolder(ctx, db, key)
	if err != nil {
		return err
	}
	switch {
	case lv.RedisURL != "":
		if err := h.learnPeers(ctx, db, key, held, lv.RedisURL); err != nil {
			return err
		}
	case held.Limiter == redisHolder && !lv.Gone:
		return configErrorf("this database's window of quota key %s lives in %s: leaving it, quota seed asks that Redis for every "+
			"ledger that spent in the window, for a host that first spent there after this database's last run on it is in no list "+
			"this database holds: give its URL with %s (the REDIS_URL it ran with); or, if it cannot be reached, %s, which seeds from "+
			"the ledgers given alone and overspends the window by the calls of any host not given (docs/operations/growing.md)",
			key, held.Name(), leavingFlag, goneFlag)
	}
	return h.forget(ctx, db, key, lv.Forget, given)
}

// learnPeers copies into db's notes the list of ledgers of the limiter of
// key in the Redis at raw, as a run's end does, once raw is known to be the
// Redis db's limiter was (held; the hash of its URL, when recorded).
func (h *Host) learnPeers(ctx context.Context, db *Database, key string, held Holder, raw string) error {
	c, err := redisClient(raw, leavingFlag)
	if err != nil {
		return err
	}
	defer c.Close()
	was, err := db.Ledger.Noted(ctx, redisNote+key)
	if err != nil {
		return err
	}
	switch at := redisHolderAt(raw); {
	case was != "" && was != RedisHash(raw):
		return configErrorf("%s: %s is not the Redis this database's limiter was (%s, by the hash of the URL it ran with, its password "+
			"left out): give that URL", leavingFlag, dsn.Redact(raw), held.Name())
	case was == "" && (held.Limiter != redisHolder || held.Redis != at.Redis):
		return configErrorf("%s: %s is not the Redis this database's window lives in (%s): give that one's URL, or leave the flag out",
			leavingFlag, dsn.Redact(raw), held.Name())
	}
	var ae *accessError
	if err := checkAccess(ctx, c); errors.As(err, &ae) {
		return configErrorf("%s: %s: %w", leavingFlag, dsn.Redact(raw), ae)
	}
	l, err := OpenLimiter(ctx, db, c, key, h.Costs, quota.NoUpstreamClock, h.clock(), quota.Options{Logger: h.Logger})
	if err != nil {
		return err
	}
	if err := l.(*quota.Redis).LearnLedgers(ctx); err != nil {
		return configErrorf("%s: %s cannot say which ledgers spent in the window of quota key %s (%s): "+
			"bring it back and run again; or, knowing every host that spent there, %s with each one's --ledger",
			leavingFlag, dsn.Redact(raw), key, dsn.Scrub(err.Error(), raw), goneFlag)
	}
	return nil
}

// forget checks that each id of --forget-peers is a peer db left that
// spent in the window and was not given, and refuses while any other is
// left.
func (h *Host) forget(ctx context.Context, db *Database, key string, forget, given []string) error {
	peers, err := h.peersNotGiven(ctx, db, key)
	if err != nil {
		return err
	}
	for _, id := range forget {
		if !slices.ContainsFunc(peers, func(p quota.LedgerSeen) bool { return p.Ledger == id }) {
			return configErrorf("--forget-peers: %s is not a ledger of a peer this database left in the window (quota key %s); "+
				"name those the refusal names", id, key)
		}
	}
	left := slices.DeleteFunc(peers, func(p quota.LedgerSeen) bool {
		return slices.Contains(given, p.Ledger) || slices.Contains(forget, p.Ledger)
	})
	return peersLeft(ctx, db, key, left)
}
