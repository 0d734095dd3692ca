package quota

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

//go:embed lease.lua
var leaseLua string

var leaseScript = redis.NewScript(leaseLua)

// lease holds a lock and renews it every ttl/3 until unlock.
type lease struct {
	renew   func(ctx context.Context) (bool, error)
	release func(ctx context.Context) error
	ttl     time.Duration
	log     *slog.Logger
}

func (l lease) start() (unlock func()) {
	stop, done := make(chan struct{}), make(chan struct{})
	go l.keep(stop, done)
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		close(stop)
		<-done
		ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl/3, time.Second))
		defer cancel()
		if err := l.release(ctx); err != nil {
			l.log.Warn("release lock", ingest.LogErr, err)
		}
	}
}

func (l lease) keep(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := ingest.NewTicker(max(l.ttl/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(l.ttl/3, 10*time.Millisecond))
		ok, err := l.renew(ctx)
		cancel()
		if err == nil && !ok {
			l.log.Warn("lock lost: another holder has it or it expired")
			return
		}
		if err != nil {
			l.log.Warn("renew lock", ingest.LogErr, err)
		}
	}
}

// Lock takes the lease name for ttl with a random token and renews it every
// ttl/3 until unlock; only the holder of the token can renew or release it.
func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(), bool, error) {
	key, tok := r.prefix+"lock:"+name, token()
	tctx, cancel := context.WithTimeout(ctx, max(r.opts.Timeout, OperatorTimeout))
	defer cancel()
	ok, err := r.client.SetNX(tctx, key, tok, ttl).Result()
	var rerr redis.Error
	if err != nil && ctx.Err() == nil && !errors.As(err, &rerr) {
		return func() {}, false, fmt.Errorf("limiter: %w: %w", ErrUnavailable, err)
	}
	if err != nil && errors.As(err, &rerr) {
		return func() {}, false, fmt.Errorf("lock %s: %w", name, redisReply(err))
	}
	if err != nil {
		return func() {}, false, fmt.Errorf("lock %s: %w", name, err)
	}
	if !ok {
		return func() {}, false, nil
	}
	l := lease{
		ttl: ttl, log: r.opts.Logger.With("lock", name),
		renew: func(ctx context.Context) (bool, error) {
			n, err := leaseScript.Run(ctx, r.client, []string{key}, tok, "renew", ttl.Milliseconds()).Int()
			return n == 1, err
		},
		release: func(ctx context.Context) error {
			return leaseScript.Run(ctx, r.client, []string{key}, tok, "release", 0).Err()
		},
	}
	return l.start(), true, nil
}

// redisReply names an error reply of Redis as the limiter's Redis's, with
// the fix for the replies an operator meets: a lease lives beside the
// limiter's counts, and the Redis that refuses one refuses them too.
func redisReply(err error) error {
	switch {
	case redis.HasErrorPrefix(err, "OOM"):
		return fmt.Errorf("the limiter's Redis (REDIS_URL) is out of memory under maxmemory with noeviction, and refuses every write: "+
			"raise its maxmemory or free its memory (INFO memory): %w", err)
	case redis.HasErrorPrefix(err, "READONLY"):
		return fmt.Errorf("the limiter's Redis (REDIS_URL) is a read-only replica: point REDIS_URL at the primary: %w", err)
	}
	return fmt.Errorf("the limiter's Redis (REDIS_URL) answered with an error: %w", err)
}
