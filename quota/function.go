package quota

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
)

// window.lua runs as a Redis Function: loaded once per server, called with
// FCALL, so that its setup (the chunk and its closures) is not rebuilt on
// every decision. The library's name carries a hash of the code, so that
// workers of two versions can share one Redis during an upgrade, each
// calling its own. Where functions cannot be had (Redis before 7.0, or a
// user without FUNCTION LOAD), the same code runs through EVALSHA.
var (
	windowFn     = "ingest_window_" + codeHash(windowLua)
	windowLib    = "#!lua name=" + windowFn + "\n" + windowLua + "\nredis.register_function('" + windowFn + "', main)\n"
	windowScript = redis.NewScript("local K0, A0 = KEYS, ARGV\n" + windowLua + "\nreturn main(K0, A0)\n")
)

func codeHash(code string) string {
	h := sha1.Sum([]byte(code))
	return hex.EncodeToString(h[:])[:12]
}

// How window.lua is called on this limiter's Redis.
const (
	fnUnknown int32 = iota // not loaded yet, as far as this worker knows
	fnLoaded               // FCALL
	fnNone                 // functions refused: EVALSHA
)

// functions remembers whether the library is loaded. A server restarted
// without persistence, FUNCTION FLUSH, or a new cluster master loses it:
// the FCALL then fails with "Function not found" before running anything,
// and the library is loaded again and the call sent once more.
type functions struct {
	state atomic.Int32
	mu    sync.Mutex // one load at a time
}

// fcall runs window.lua for one call. The caller's ctx bounds it.
func (r *Redis) fcall(ctx context.Context, keys []string, args []any) *redis.Cmd {
	return r.call(ctx, keys, nil, args)
}

// call runs window.lua for one call with keys; head, when not nil, is the
// FCALL command's first arguments for those keys (FCALL, the function, the
// key count and the keys), boxed once, so that a spend does not box them
// again on every decision.
func (r *Redis) call(ctx context.Context, keys []string, head []any, args []any) *redis.Cmd {
	if r.fn.state.Load() == fnUnknown {
		if err := r.loadFunction(ctx); err != nil {
			cmd := redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
	}
	if r.fn.state.Load() == fnNone {
		return windowScript.Run(ctx, r.client, keys, args...)
	}
	var cmd *redis.Cmd
	if head != nil {
		cmd = redis.NewCmd(ctx, append(append(make([]any, 0, len(head)+len(args)), head...), args...)...)
		cmd.SetFirstKeyPos(3)
		_ = r.client.Process(ctx, cmd)
	} else {
		cmd = r.client.FCall(ctx, windowFn, keys, args...)
	}
	if cmd.Err() != nil && notLoaded(cmd.Err()) {
		r.fn.state.CompareAndSwap(fnLoaded, fnUnknown)
		if err := r.loadFunction(ctx); err != nil {
			cmd.SetErr(err)
			return cmd
		}
		return r.call(ctx, keys, head, args)
	}
	return cmd
}

// fcallHead is the first arguments of an FCALL of window.lua with keys.
func fcallHead(keys []string) []any {
	head := []any{"fcall", windowFn, len(keys)}
	for _, k := range keys {
		head = append(head, k)
	}
	return head
}

// notLoaded tells the reply of an FCALL to a server without the library.
func notLoaded(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.Contains(strings.ToLower(rerr.Error()), "function not found")
}

// loadFunction loads the library on the server, or on every master of a
// cluster (a function lives on each node). A library already there is
// fine. A server that refuses functions altogether (an unknown command,
// or no permission) is called through EVALSHA from then on.
func (r *Redis) loadFunction(ctx context.Context) error {
	r.fn.mu.Lock()
	defer r.fn.mu.Unlock()
	if r.fn.state.Load() != fnUnknown {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(r.opts.Timeout, 5*time.Second))
	defer cancel()
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, windowLib).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	}
	var err error
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return load(ctx, c) })
	} else {
		err = load(ctx, r.client)
	}
	var rerr redis.Error
	switch {
	case err == nil:
		r.fn.state.Store(fnLoaded)
	case errors.As(err, &rerr):
		r.opts.Logger.Debug("Redis functions unavailable: window.lua runs through EVALSHA", ingest.LogErr, err)
		r.fn.state.Store(fnNone)
	default:
		return err
	}
	return nil
}
