package ratelimit

import (
	"context"
	_ "embed"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed gcra.lua
var gcraSource string

var gcraScript = redis.NewScript(gcraSource)

// keyPrefix starts every key of the API's clients, apart from the
// upstream limiter's keys (ingest:{quota key}:...).
const keyPrefix = "ingest:api:"

// Pipelining: requests that arrive while others wait for Redis go out
// together, at most batchMax in one write, from flushers senders at once.
// A request alone goes out at once: nothing waits for company. Each
// request still costs one round trip; a busy serve spends one write and
// one read of its own and of Redis's per batch rather than per request.
const (
	batchMax = 64
	flushers = 1
)

// Redis keeps the counts in Redis, shared by every process on it; one
// script call per request decides by the server's clock.
type Redis struct {
	client  redis.UniversalClient
	timeout time.Duration
	queue   chan *call
	quit    chan struct{}
	once    sync.Once
}

// call is one request waiting for its batch.
type call struct {
	key   string
	args  []any
	reply []int64
	err   error
	done  chan struct{}
}

// NewRedis returns a limiter on client whose every round trip ends within
// timeout (a hung Redis answers a request with an error, not a wait); Close
// stops its senders. The script is sent with EVALSHA, and loaded again
// when Redis does not know it (after a restart).
func NewRedis(client redis.UniversalClient, timeout time.Duration) *Redis {
	r := &Redis{client: client, timeout: timeout, queue: make(chan *call, batchMax*flushers), quit: make(chan struct{})}
	for range flushers {
		go r.flush()
	}
	return r
}

// Close stops the senders; the client is the caller's to close.
func (r *Redis) Close() { r.once.Do(func() { close(r.quit) }) }

// Warm dials Redis and loads the script, so that a server's first
// request asks a limiter ready to answer within its bound rather than one
// still connecting.
func (r *Redis) Warm(ctx context.Context) error {
	if err := gcraScript.Load(ctx, r.client).Err(); err != nil {
		return fmt.Errorf("ratelimit: redis: load the script: %w", err)
	}
	return nil
}

// Backend is "redis".
func (r *Redis) Backend() string { return "redis" }

// Allow decides one request of client on plan.
func (r *Redis) Allow(ctx context.Context, plan APIPlan, client string, cost int64) (Result, error) {
	ru, err := ruleOf(plan, cost)
	if err != nil {
		return Result{}, err
	}
	c := &call{key: keyPrefix + key(plan, client), args: []any{ru.interval, ru.tolerance, cost}, done: make(chan struct{})}
	select {
	case r.queue <- c:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("ratelimit: redis: %w", ctx.Err())
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return Result{}, fmt.Errorf("ratelimit: redis: %w", ctx.Err())
	}
	if c.err == nil && len(c.reply) != 3 {
		c.err = fmt.Errorf("the script answered %v, want 3 numbers", c.reply)
	}
	if c.err != nil {
		return Result{}, fmt.Errorf("ratelimit: redis: %w", c.err)
	}
	return ru.result(c.reply[0] == 1, c.reply[1], c.reply[2], cost), nil
}

// flush sends batches until Close: the first waiting request, and any
// others already queued behind it.
func (r *Redis) flush() {
	batch := make([]*call, 0, batchMax)
	for {
		select {
		case c := <-r.queue:
			batch = append(batch[:0], c)
		case <-r.quit:
			return
		}
	more:
		for len(batch) < batchMax {
			select {
			case c := <-r.queue:
				batch = append(batch, c)
			default:
				break more
			}
		}
		r.send(batch)
	}
}

// send runs a batch as one pipeline, and once more with the script loaded
// when Redis answered NOSCRIPT.
func (r *Redis) send(batch []*call) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	cmds := r.pipeline(ctx, batch)
	if len(cmds) > 0 && redis.HasErrorPrefix(cmds[0].Err(), "NOSCRIPT") {
		if err := gcraScript.Load(ctx, r.client).Err(); err == nil {
			cmds = r.pipeline(ctx, batch)
		}
	}
	for i, c := range batch {
		c.reply, c.err = cmds[i].Int64Slice()
		close(c.done)
	}
}

func (r *Redis) pipeline(ctx context.Context, batch []*call) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(batch))
	_, _ = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range batch {
			cmds[i] = gcraScript.EvalSha(ctx, p, []string{c.key}, c.args...)
		}
		return nil
	})
	return cmds
}
