package quota

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest"
)

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
	t := time.NewTicker(max(l.ttl/3, time.Millisecond))
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
