package custody

// A host that leaves its peers: a database whose limiter was a Redis key
// other hosts spent on holds only its own calls of the window, so the
// embedded limiter it opens would spend theirs again. It refuses to start
// until the operator gives it their ledgers (quota seed) or types their
// ledger ids to forget them (docs/operations/growing.md).

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
)

// redisNote (+ the quota key) is which Redis the database's limiter was:
// a hash of its URL without the password.
const redisNote = "redis:"

// givenNote (+ the quota key) are the ledgers of peers the embedded
// limiter was given by quota seed, or told to forget.
const givenNote = "peers_given:"

// RedisHash is a Redis URL's hash without its password, so that a note
// names the server and database and keeps no credential.
func RedisHash(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		raw = u.String()
	}
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])[:12]
}

// NoteRedis records in led which Redis the limiter of key is, so that a
// host that leaves it later knows its peers were there.
func (r *Rules) NoteRedis(ctx context.Context, led *ledger.Ledger, key string) error {
	return led.Note(ctx, redisNote+key, RedisHash(r.RedisURL))
}

// PeersLeftError: the embedded limiter would open on a database whose
// limiter was a Redis key peers spent on in the window.
type PeersLeftError struct {
	Key, Redis string
	Peers      []quota.LedgerSeen
}

func (e *PeersLeftError) Error() string {
	var named, ids []string
	for _, p := range e.Peers {
		named = append(named, fmt.Sprintf("%s at %s, last call %s", p.Ledger, p.Where, time.UnixMilli(p.At).UTC().Format(time.RFC3339)))
		ids = append(ids, p.Ledger)
	}
	return fmt.Sprintf("this database's limiter was the Redis %s of quota key %s, shared with other hosts that spent in the window "+
		"(ledger %s): their calls are not in this database, and the embedded limiter would spend them again. "+
		"Give it every host's ledger first: `ingest quota seed --ledger DB --ledger PEER_DB... --leaving-redis URL` without REDIS_URL; "+
		"or set --redis / REDIS_URL back; or, to start without their calls and risk overspending the window by them, "+
		"`ingest quota seed --forget-peers=%s --leaving-redis URL` (--leaving-redis-gone if that Redis cannot be reached) "+
		"(docs/operations/growing.md)",
		e.Redis, e.Key, strings.Join(named, "; "), strings.Join(ids, ","))
}

// LeftPeers refuses the embedded limiter on led's database when its
// limiter was a Redis key whose other ledgers spent in the window and were
// not given to it.
func (r *Rules) LeftPeers(ctx context.Context, led *ledger.Ledger, key string) error {
	peers, err := r.peersNotGiven(ctx, led, key)
	if err != nil {
		return err
	}
	return peersLeft(ctx, led, key, peers)
}

// peersLeft is the refusal naming peers, nil for none.
func peersLeft(ctx context.Context, led *ledger.Ledger, key string, peers []quota.LedgerSeen) error {
	if len(peers) == 0 {
		return nil
	}
	redis, err := led.Noted(ctx, redisNote+key)
	if err != nil {
		return err
	}
	return &ingest.ConfigError{Err: &PeersLeftError{Key: key, Redis: cmp.Or(redis, "(unrecorded)"), Peers: peers}}
}

// peersNotGiven are the peers of db's last Redis limiter of key that
// spent in the window and that quota seed has not given the embedded
// limiter.
func (r *Rules) peersNotGiven(ctx context.Context, led *ledger.Ledger, key string) ([]quota.LedgerSeen, error) {
	self, err := led.LedgerID(ctx)
	if err != nil {
		return nil, err
	}
	peers, err := quota.NotedPeers(ctx, led, key, self, r.now(), r.Span)
	if err != nil || len(peers) == 0 {
		return nil, err
	}
	given, err := noted[[]string](ctx, led, givenNote+key)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(peers, func(p quota.LedgerSeen) bool { return slices.Contains(given, p.Ledger) }), nil
}

// givePeers notes on db that the embedded limiter of key was given the
// ledgers ids (by quota seed), or told to forget them.
func givePeers(ctx context.Context, led *ledger.Ledger, key string, ids []string) error {
	given, err := noted[[]string](ctx, led, givenNote+key)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.Contains(given, id) {
			given = append(given, id)
		}
	}
	b, _ := json.Marshal(given)
	return led.Note(ctx, givenNote+key, string(b))
}

// noted is a JSON note's value; the zero value when there is none.
func noted[T any](ctx context.Context, led *ledger.Ledger, name string) (T, error) {
	var v T
	raw, err := led.Noted(ctx, name)
	if err != nil || raw == "" {
		return v, err
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return v, fmt.Errorf("note %s: %w", name, err)
	}
	return v, nil
}
