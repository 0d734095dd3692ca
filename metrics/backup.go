package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest"
)

// Backups are the series of the database's backups: the age of the
// newest, read at scrape time on the house clock, the period they are
// taken at, and the scheduled ones that failed. The newest is the later of
// the daemon's own (run --backup-to) and the one the database recorded
// (ingest db backup, on either database). The age counts from the
// daemon's start while no backup is known, so that a first backup that
// never succeeds grows old as a late one does.
type Backups struct {
	clock ingest.Clock
	every time.Duration
	kept  func(context.Context) (time.Time, error)

	mu     sync.Mutex
	last   time.Time
	failed int64
}

// keptRead bounds a scrape's read of the backup the database recorded.
const keptRead = 2 * time.Second

// NewBackups are the series of backups every every, started now on c;
// kept, when set, reads the newest backup the database recorded.
func NewBackups(c ingest.Clock, every time.Duration, kept func(context.Context) (time.Time, error)) *Backups {
	return &Backups{clock: c, every: every, kept: kept, last: c.Now()}
}

// Took says a backup was taken at at.
func (b *Backups) Took(at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.last = at
}

// Failed counts a backup that failed.
func (b *Backups) Failed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failed++
}

func (b *Backups) read() (age time.Duration, failed int64) {
	b.mu.Lock()
	last, failed := b.last, b.failed
	b.mu.Unlock()
	if b.kept != nil {
		// A database that cannot be read leaves the daemon's own: the
		// age grows, as it should when nothing says a backup was taken.
		ctx, cancel := context.WithTimeout(context.Background(), keptRead)
		at, err := b.kept(ctx)
		cancel()
		if err == nil && at.After(last) {
			last = at
		}
	}
	return b.clock.Now().Sub(last), failed
}

// Collectors are the series, for Register.
func (b *Backups) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_backup_age_seconds",
			Help: "Seconds since the newest backup was taken, by --backup-to or ingest db backup on either database (since the daemon's start while none is known)."},
			func() float64 { age, _ := b.read(); return age.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_backup_every_seconds",
			Help: "The period backups are taken at (--backup-every)."},
			func() float64 { return b.every.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_backup_failures_total",
			Help: "Scheduled backups that failed (the log says why); the next is tried a period on."},
			func() float64 { _, n := b.read(); return float64(n) }),
	}
}
