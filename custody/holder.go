package custody

// Which limiter holds a database's window: every database records, in its
// ledger's notes, the limiter its window of a quota key lives in (its own
// embedded one, or Redis) and each move of it, and a run on any other
// limiter is refused until the move is typed (docs/operations/growing.md). A window carried into Redis by quota seed and spent on there
// by other hosts is not in this database's ledger: the embedded limiter
// would spend it again.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// holderNote (+ the quota key) is the database's Holder of that key.
const holderNote = "limiter_holder:"

// The kinds of limiter a window lives in.
const (
	embeddedHolder = "embedded"
	redisHolder    = "redis"
)

// Embedded is the limiter embedded in the database as a Holder.
var Embedded = Holder{Limiter: embeddedHolder}

// InRedis is the Redis at addr as a Holder: the address its client dials
// (a socket's path for unix://), which holds no part of its URL's password.
func InRedis(addr string) Holder { return Holder{Limiter: redisHolder, Redis: addr} }

// RedisAt is the Redis at the URL raw as a Holder (InRedis): the address
// its client dials first, else the URL's host.
func RedisAt(raw string) Holder {
	_, addr := quota.Address(raw)
	if addr == "" {
		addr = quota.Host(raw)
	}
	return InRedis(addr)
}

// HolderOf is the limiter a host's settings name: the Redis at redisURL,
// or the embedded one when redisURL is "".
func HolderOf(redisURL string) Holder {
	if redisURL != "" {
		return RedisAt(redisURL)
	}
	return Embedded
}

// keptMoves bounds a Holder's history: enough to read how a database got
// where it is, never a log that grows with every run.
const keptMoves = 32

// Holder is the limiter a database's window of a quota key lives in, and
// the moves that put it there, oldest first.
type Holder struct {
	Limiter string `json:"limiter"`         // embeddedHolder or redisHolder
	Redis   string `json:"redis,omitempty"` // the Redis's host, port and database: never its password
	Moves   []Move `json:"moves,omitempty"`
}

// Move is one change of a database's Holder, or the run that first
// recorded it.
type Move struct {
	To string    `json:"to"` // the limiter, as Holder.Name says it
	By string    `json:"by"` // the command: a run, quota seed, quota restore
	At time.Time `json:"at"`
}

// Name is the limiter as a message says it.
func (w Holder) Name() string {
	if w.Limiter == redisHolder {
		return "the Redis at " + w.Redis
	}
	return "the embedded limiter in this database"
}

// recordedHolder is db's Holder of key; a database that ran on Redis
// before holders were recorded is held by that Redis, one that never
// spent by none (Limiter "").
func recordedHolder(ctx context.Context, led *ledger.Ledger, key string) (Holder, error) {
	w, err := noted[Holder](ctx, led, holderNote+key)
	if err != nil || w.Limiter != "" {
		return w, err
	}
	if ran, err := led.Noted(ctx, redisNote+key); err != nil || ran == "" {
		return w, err
	}
	return Holder{Limiter: redisHolder, Redis: "(unrecorded)"}, nil
}

// recordHolder notes on db that its window of key lives in to, moved by
// the command by; a run on the recorded limiter writes nothing, but for
// the new address of a Redis (a failover's), so that a refusal names the
// one the database last ran on.
func (r *Rules) recordHolder(ctx context.Context, led *ledger.Ledger, key string, to Holder, by string) error {
	w, err := recordedHolder(ctx, led, key)
	if err != nil {
		return err
	}
	if by == runMove && w.Limiter == to.Limiter && w.Redis == to.Redis {
		return nil
	}
	moves := append(w.Moves, Move{To: to.Name(), By: by, At: r.now().UTC()})
	to.Moves = moves[max(0, len(moves)-keptMoves):]
	b, err := json.Marshal(to)
	if err != nil {
		return err
	}
	return led.Note(ctx, holderNote+key, string(b))
}

// runMove is the move a database's first run records.
const runMove = "a run"

// HolderError is a run on another limiter than the one the database's
// window lives in.
type HolderError struct {
	Key        string
	Held, Here Holder
}

func (e *HolderError) Error() string {
	how := "it ran there before databases recorded their limiter"
	if n := len(e.Held.Moves); n > 0 {
		last := e.Held.Moves[n-1]
		how = fmt.Sprintf("put there by %s at %s", last.By, last.At.Format(time.RFC3339))
	}
	msg := fmt.Sprintf("this database's window of quota key %s lives in %s (%s), and this run would spend on %s, "+
		"which holds none of what was spent there since: ", e.Key, e.Held.Name(), how, e.Here.Name())
	if e.Held.Limiter == redisHolder {
		return msg + "set --redis / REDIS_URL back to that Redis; or move the window back first, naming the database of every host " +
			"that spent on that Redis: `ingest quota seed --ledger DB --ledger PEER_DB... --leaving-redis URL` without REDIS_URL, " +
			"URL being that Redis's, which seed asks for every host that spent in the window (docs/operations/growing.md)"
	}
	return msg + "move the window there first, naming the database of every host that spent in it: " +
		"`ingest quota seed --ledger DB...` with REDIS_URL set; or unset --redis / REDIS_URL (docs/operations/growing.md)"
}

// heldElsewhere refuses a run on led's database when its window of key
// lives in another limiter than this host's settings name.
func (r *Rules) heldElsewhere(ctx context.Context, led *ledger.Ledger, key string) error {
	w, err := recordedHolder(ctx, led, key)
	if err != nil || w.Limiter == "" || w.Limiter == r.Here.Limiter {
		return err
	}
	return &ingest.ConfigError{Err: &HolderError{Key: key, Held: w, Here: r.Here}}
}

// HeldHere refuses a run on led's database whose window of key another
// limiter holds, and records this one on a database's first run.
func (r *Rules) HeldHere(ctx context.Context, led *ledger.Ledger, key string) error {
	if err := r.heldElsewhere(ctx, led, key); err != nil {
		return err
	}
	return r.recordHolder(ctx, led, key, r.Here, runMove)
}

// SpentOnRedis reports whether led's window of key is recorded to live in
// the Redis this host's settings name: the database spent there before, so
// a Redis that does not answer now is an outage, not a mistyped address.
func (r *Rules) SpentOnRedis(ctx context.Context, led *ledger.Ledger, key string) (bool, error) {
	w, err := recordedHolder(ctx, led, key)
	if err != nil || w.Limiter != redisHolder {
		return false, err
	}
	return w.Redis == r.Here.Redis || w.Redis == "(unrecorded)", nil
}

// MoveTo records on each database paths that its window of key now lives
// in the limiter this host's settings name, moved by the command by.
func (r *Rules) MoveTo(ctx context.Context, paths []string, key, by string) error {
	for _, path := range paths {
		db, err := r.Open(ctx, path, true)
		if err != nil {
			return ingest.ConfigErrorf("--ledger %s: record where its window went: %w", store.Redact(path), err)
		}
		err = r.recordHolder(ctx, db.Ledger, key, r.Here, by)
		db.Close()
		if err != nil {
			return fmt.Errorf("--ledger %s: record where its window went: %w", store.Redact(path), err)
		}
	}
	return nil
}

// BeforeSpending is what custody checks of a ledger's key before a run
// spends: the peers a Redis left behind (off Redis), that the window is
// held here, and on Redis, that this ledger now spends there.
func (r *Rules) BeforeSpending(ctx context.Context, led *ledger.Ledger, key string, onRedis bool) error {
	if !onRedis {
		if err := r.LeftPeers(ctx, led, key); err != nil {
			return err
		}
	}
	if err := r.HeldHere(ctx, led, key); err != nil {
		return err
	}
	if onRedis {
		return r.NoteRedis(ctx, led, key)
	}
	return nil
}
