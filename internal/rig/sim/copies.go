package sim

import (
	"context"
	"sync"
	"time"

	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/wiring"
)

// Copy is one `ingest db copy`'s look at the daemon's database, as an
// operator moving to a new store makes it (docs/operations/growing.md):
// when, the start of the life of the daemon it looked beside, whether
// that life ran all the while it looked, the workers it saw writing the
// database, and its error.
type Copy struct {
	At, Started time.Time
	Running     bool
	Workers     int
	Err         error
}

// copyAfter is how long after a start the copy looks: before the lease's
// first renewal, so that a lease taken wrong at the start shows before a
// renewal mends it.
const copyAfter = ledger.WorkerTTL / 4

// copies are the copies' looks, each on a goroutine of its own so that
// the nemesis keeps its times.
type copies struct {
	mu  sync.Mutex
	wg  sync.WaitGroup
	out []Copy
}

// beside has a copy look at dsn copyAfter after p's start (now), unless
// the history ends before.
func (c *copies) beside(dsn string, p *process, end time.Time) {
	started := time.Now()
	if started.Add(copyAfter).After(end) {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		time.Sleep(copyAfter)
		running := p.running.Load()
		n, err := liveWorkers(dsn)
		look := Copy{At: time.Now(), Started: started, Running: running && p.running.Load(), Workers: n, Err: err}
		c.mu.Lock()
		c.out = append(c.out, look)
		c.mu.Unlock()
	}()
}

// looks are the copies' looks, once each has ended.
func (c *copies) looks() []Copy {
	c.wg.Wait()
	return c.out
}

// liveWorkers is how many workers `ingest db copy` sees writing dsn: what
// it asks before it copies (wiring.Host.LiveSource).
func liveWorkers(dsn string) (int, error) {
	live, err := (&wiring.Host{DSN: dsn}).LiveSource(context.Background())
	if live == nil {
		return 0, err
	}
	return len(live.Workers), err
}
