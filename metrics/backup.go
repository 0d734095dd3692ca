package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ingestworks/ingest"
)

// Backups are the series of the daemon's scheduled backups (run
// --backup-to): the age of the newest backup, read at scrape time on the
// house clock, the period it is taken at, and the backups that failed. The
// age counts from the schedule's start while no backup is known, so that a
// first backup that never succeeds grows old as a late one does.
type Backups struct {
	clock ingest.Clock
	every time.Duration

	mu     sync.Mutex
	last   time.Time
	failed int64
}

// NewBackups are the series of a schedule of backups every every, started
// now on c.
func NewBackups(c ingest.Clock, every time.Duration) *Backups {
	return &Backups{clock: c, every: every, last: c.Now()}
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
	defer b.mu.Unlock()
	return b.clock.Now().Sub(b.last), b.failed
}

// Collectors are the series, for Register.
func (b *Backups) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_backup_age_seconds",
			Help: "Seconds since the newest backup --backup-to holds was taken (since the daemon's start while it holds none)."},
			func() float64 { age, _ := b.read(); return age.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ingest_backup_every_seconds",
			Help: "The period backups are taken at (--backup-every)."},
			func() float64 { return b.every.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "ingest_backup_failures_total",
			Help: "Scheduled backups that failed (the log says why); the next is tried a period on."},
			func() float64 { _, n := b.read(); return float64(n) }),
	}
}
