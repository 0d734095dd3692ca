package custody

// A host leaving a Redis key for its embedded limiter (quota seed without
// REDIS_URL) learns every ledger that spent in the window from the limiter
// it leaves, not only those its own copy of the limiter's list names: a
// host that first spent after this one's last contact with Redis is in no
// copy it holds, and the embedded limiter would spend its calls again
// (docs/operations/growing.md).

import (
	"context"
	"fmt"
	"slices"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
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
	LeavingFlag = "--leaving-redis / INGEST_QUOTA_SEED_LEAVING_REDIS"
	GoneFlag    = "--leaving-redis-gone"
)

// UnknownLedgersError refuses quota seed back to the embedded limiter when
// the Redis left answers but cannot say which ledgers spent in the window
// of QuotaKey: the embedded limiter would spend again the calls of any host
// it is not told of. What the Redis said is in the message, scrubbed of
// the URL's secrets; it is not wrapped, for the refusal is the operator's
// to settle, not an outage.
type UnknownLedgersError struct {
	RedisURL, QuotaKey string
	Said               error
}

func (e *UnknownLedgersError) Error() string {
	return fmt.Sprintf("%s: %s cannot say which ledgers spent in the window of quota key %s (%s): "+
		"bring it back and run again; or, knowing every host that spent there, %s with each one's --ledger",
		LeavingFlag, ingest.Redact(e.RedisURL), e.QuotaKey, ingest.Scrub(e.Said.Error(), e.RedisURL), GoneFlag)
}

// UnknownLedgers is the configuration error of an UnknownLedgersError: the
// Redis at redisURL said err when asked which ledgers spent in the window
// of quotaKey.
func UnknownLedgers(redisURL, quotaKey string, err error) error {
	return &ingest.ConfigError{Err: &UnknownLedgersError{RedisURL: redisURL, QuotaKey: quotaKey, Said: err}}
}

// leave refuses quota seed back to the embedded limiter on db, before it
// takes any call, while a ledger that spent in the window on the Redis db
// leaves is neither given (the ledgers ids) nor forgotten; when db's
// window lives in a Redis, that Redis is asked first.
func (r *Rules) leave(ctx context.Context, db *Database, key string, lv Leaving, given []string) error {
	if lv.RedisURL != "" && lv.Gone {
		return ingest.ConfigErrorf("%s and %s: give one: the Redis left, or the word that it cannot be asked", LeavingFlag, GoneFlag)
	}
	held, err := recordedHolder(ctx, db.Ledger, key)
	if err != nil {
		return err
	}
	switch {
	case lv.RedisURL != "":
		if err := r.learnPeers(ctx, db, key, held, lv.RedisURL); err != nil {
			return err
		}
	case held.Limiter == redisHolder && !lv.Gone:
		return ingest.ConfigErrorf("this database's window of quota key %s lives in %s: leaving it, quota seed asks that Redis for every "+
			"ledger that spent in the window, for a host that first spent there after this database's last run on it is in no list "+
			"this database holds: give its URL with %s (the REDIS_URL it ran with); or, if it cannot be reached, %s, which seeds from "+
			"the ledgers given alone and overspends the window by the calls of any host not given (docs/operations/growing.md)",
			key, held.Name(), LeavingFlag, GoneFlag)
	}
	return r.forget(ctx, db.Ledger, key, lv.Forget, given)
}

// learnPeers copies into db's notes the list of ledgers of the limiter of
// key in the Redis at raw, as a run's end does, once raw is known to be the
// Redis db's limiter was (held; the hash of its URL, when recorded).
func (r *Rules) learnPeers(ctx context.Context, db *Database, key string, held Holder, raw string) error {
	was, err := db.Ledger.Noted(ctx, redisNote+key)
	if err != nil {
		return err
	}
	switch {
	case was != "" && was != RedisHash(raw):
		return ingest.ConfigErrorf("%s: %s is not the Redis this database's limiter was (%s, by the hash of the URL it ran with, its password "+
			"left out): give that URL", LeavingFlag, ingest.Redact(raw), held.Name())
	case was == "" && (held.Limiter != redisHolder || held.Redis != r.RedisAt(raw).Redis):
		return ingest.ConfigErrorf("%s: %s is not the Redis this database's window lives in (%s): give that one's URL, or leave the flag out",
			LeavingFlag, ingest.Redact(raw), held.Name())
	}
	return db.Learn(ctx, raw, key)
}

// forget checks that each id of --forget-peers is a peer db left that
// spent in the window and was not given, and refuses while any other is
// left.
func (r *Rules) forget(ctx context.Context, led *ledger.Ledger, key string, forget, given []string) error {
	peers, err := r.peersNotGiven(ctx, led, key)
	if err != nil {
		return err
	}
	for _, id := range forget {
		if !slices.ContainsFunc(peers, func(p quota.LedgerSeen) bool { return p.Ledger == id }) {
			return ingest.ConfigErrorf("--forget-peers: %s is not a ledger of a peer this database left in the window (quota key %s); "+
				"name those the refusal names", id, key)
		}
	}
	left := slices.DeleteFunc(peers, func(p quota.LedgerSeen) bool {
		return slices.Contains(given, p.Ledger) || slices.Contains(forget, p.Ledger)
	})
	return peersLeft(ctx, led, key, left)
}
