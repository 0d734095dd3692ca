// Package purge tells the caches in front of the readers' site to drop the
// answers a landing changed, by the keys those answers carry
// (Surrogate-Key, docs/api.md): one HTTP request per cache and batch of
// keys, PURGE with the keys in Surrogate-Key and in xkey-purge, the header
// Varnish's xkey module reads (docs/operations/readers.md, "Readers behind a
// cache").
//
// Purge sends to one cache and says whether it took the keys, for a caller
// that keeps what each cache was purged up to (the readers' site keeps it
// in the database, so a landing no process purged in time is purged when
// one can); a cache down holds up only its own caller.
//
// Send is in nobody's way: it queues and returns, each cache has a queue
// and a sender of its own, so a cache down delays no other, and a request
// that fails is tried again with backoff, a few times. A queue that
// overflows is not dropped in silence: its next batch drops the whole
// site instead, since what was lost is not known. The counts of what was
// sent, retried, failed and overflowed are read by /metrics (Figures).
package purge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingestworks/ingest/clock"
)

// SiteKey is the key every shared answer carries: purged when a batch
// was lost.
const SiteKey = "site"

// queued is how many batches a cache's queue holds before it overflows:
// a landing is one batch, and a cache a few landings behind is down.
const queued = 64

// attempts is how many times a batch is sent to a cache before it is
// counted failed; firstBackoff the wait after the first failure, doubled
// after each.
const (
	attempts     = 5
	firstBackoff = 250 * time.Millisecond
)

// maxHeader bounds the keys of one request: a cache refuses a longer
// header line than a few kilobytes.
const maxHeader = 4000

// Figures are what the senders did since the start, over every cache.
type Figures struct {
	Sent, Retried, Failed, Overflowed int64
}

// Sender sends each batch of keys to every cache.
type Sender struct {
	caches []*cache
	client *http.Client
	logger *slog.Logger
	ctx    context.Context // cancelled by Close: a stopping process waits for no cache
	stop   context.CancelFunc
	wg     sync.WaitGroup
	figures
}

type figures struct {
	sent, retried, failed, overflowed atomic.Int64
}

// cache is one cache's queue; lost says a batch did not fit in it.
type cache struct {
	url   *url.URL
	queue chan []string
	lost  atomic.Bool
}

// New starts a sender to each of urls; Close stops them.
func New(urls []*url.URL, logger *slog.Logger) *Sender {
	s := &Sender{client: &http.Client{Timeout: 5 * time.Second}, logger: logger}
	s.ctx, s.stop = context.WithCancel(context.Background())
	for _, u := range urls {
		c := &cache{url: u, queue: make(chan []string, queued)}
		s.caches = append(s.caches, c)
		s.wg.Add(1)
		go s.run(c)
	}
	return s
}

// Send queues keys for every cache and returns at once.
func (s *Sender) Send(keys []string) {
	for _, c := range s.caches {
		select {
		case c.queue <- keys:
		default:
			c.lost.Store(true)
			s.overflowed.Add(1)
		}
	}
}

// Close stops the senders, what is queued unsent: the caches keep those
// answers until their s-maxage. Send must not be called after it.
func (s *Sender) Close() {
	s.stop()
	for _, c := range s.caches {
		close(c.queue)
	}
	s.wg.Wait()
}

// Figures are the counts of what was sent (requests a cache took),
// retried, failed (after every attempt) and overflowed (batches a full
// queue lost).
func (s *Sender) Figures() Figures {
	return Figures{Sent: s.sent.Load(), Retried: s.retried.Load(), Failed: s.failed.Load(), Overflowed: s.overflowed.Load()}
}

func (s *Sender) run(c *cache) {
	defer s.wg.Done()
	for keys := range c.queue {
		if s.ctx.Err() != nil {
			continue // stopping: drain the queue, send nothing
		}
		if c.lost.Swap(false) {
			keys = []string{SiteKey}
		}
		for _, batch := range batches(keys) {
			_ = s.send(s.ctx, c, batch) // counted and said by send
		}
	}
}

// Caches name each cache by its URL, its password left out: the name its
// purged mark is kept under.
func (s *Sender) Caches() []string {
	names := make([]string, len(s.caches))
	for i, c := range s.caches {
		names[i] = c.url.Redacted()
	}
	return names
}

// Purge sends keys to the cache at index cache (of Caches) and returns
// once it took them, or with why not after every attempt, or when ctx or
// Close ends it. A caller that keeps what it purged (web's purged mark)
// keeps it only when the cache took it.
func (s *Sender) Purge(ctx context.Context, cache int, keys []string) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(s.ctx, stop)()
	for _, batch := range batches(keys) {
		if err := s.send(ctx, s.caches[cache], batch); err != nil {
			return err
		}
	}
	return nil
}

// send sends one batch to c, again after a failure, up to attempts.
func (s *Sender) send(ctx context.Context, c *cache, keys string) error {
	wait := firstBackoff
	for try := 1; ; try++ {
		err := s.purge(ctx, c.url, keys)
		if err == nil {
			s.sent.Add(1)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if try == attempts {
			s.failed.Add(1)
			s.logger.Warn("purge: the cache did not take it; it is purged again from the mark it took last", "cache", c.url.Redacted(), "err", err)
			return err
		}
		s.retried.Add(1)
		if err := clock.Sleep(ctx, wait); err != nil {
			return err
		}
		wait *= 2
	}
}

// purge asks u to drop the answers carrying keys.
func (s *Sender) purge(ctx context.Context, u *url.URL, keys string) error {
	req, err := http.NewRequestWithContext(ctx, "PURGE", u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Surrogate-Key", keys)
	req.Header.Set("xkey-purge", keys)
	res, err := s.client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 && res.StatusCode != http.StatusNotFound { // 404: nothing held under them
		return fmt.Errorf("PURGE %s: %s", u.Redacted(), res.Status)
	}
	return nil
}

// batches are keys space separated, each at most maxHeader long.
func batches(keys []string) []string {
	var out []string
	var b strings.Builder
	for _, k := range keys {
		if b.Len() > 0 && b.Len()+1+len(k) > maxHeader {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}
