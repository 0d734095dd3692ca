package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ingestworks/ingest"
)

// WorkerTTL is how long a worker's lease on its database lives without
// renewal: a worker renews it every third of it while it runs, so a
// crashed one frees it this soon.
const WorkerTTL = 2 * time.Minute

// workerLease names a worker's lease in the locks table: the host and the
// process, which a copy that refuses names.
const workerLease = "worker "

// Worker is a worker's lease in force on the database.
type Worker struct {
	Host    string
	PID     int
	Renewed time.Time // when it last renewed its lease
}

func (w Worker) String() string {
	return fmt.Sprintf("host %s pid %d (its lease renewed at %s)", w.Host, w.PID, w.Renewed.UTC().Format(time.RFC3339))
}

// HoldWorker takes this process's lease on the database, as host and pid,
// and renews it until release: so that a copy of the database can tell
// that it is still being written (Workers). The lease lives in the
// database whatever limiter the worker meters by.
func (l *Ledger) HoldWorker(ctx context.Context, host string, pid int, log *slog.Logger) (release func(), err error) {
	lease, err := l.hold(ctx, workerLease+host+" "+strconv.Itoa(pid), "the worker's lease", log)
	return lease.Release, err
}

// copyWorkerLease names, in a source's locks table, the lease a worker on
// a copy of it holds there while it runs (HoldCopyWorker): its host, its
// process and the copy's path.
const copyWorkerLease = "copy-worker "

// CopyWorker is a worker on a copy of the database, holding its lease
// here.
type CopyWorker struct {
	Worker
	Copy string // where the copy is
}

func (w CopyWorker) String() string {
	return fmt.Sprintf("host %s pid %d on %s (its lease renewed at %s)", w.Host, w.PID, w.Copy, w.Renewed.UTC().Format(time.RFC3339))
}

// HoldCopyWorker takes, on a copy's source (this database), the lease of
// a worker on the copy (the path copy; host and pid its process), and
// renews it until release: while it is in force, the source's workers
// refuse to start (CopyWorkers), as neither ledger holds the other's
// calls.
func (l *Ledger) HoldCopyWorker(ctx context.Context, host string, pid int, copy string, log *slog.Logger) (*Lease, error) {
	return l.hold(ctx, copyWorkerLease+host+" "+strconv.Itoa(pid)+" "+copy, "the copy's worker's lease on its source", log)
}

// Lease is a lease this process holds and renews every third of
// WorkerTTL until Release. A process stalled past WorkerTTL (stopped,
// swapped out, a VM paused) lets it lapse unseen: the other side may have
// read it gone and started meanwhile. Lapsed says so, and keeps saying it,
// whatever renewal came since, until Confirm.
type Lease struct {
	Release func()
	t       Tables
	name    string
	tok     string
	mu      sync.Mutex
	until   int64 // when it expires by the database's clock, as last taken or renewed
	lapsed  bool  // a renewal or a look found it expired
}

// renew moves the lease's expiry on, noting a lapse first.
func (l *Lease) renew(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now, err := l.t.Clock(ctx, nil)
	if err != nil {
		return err
	}
	if now >= l.until {
		l.lapsed = true
	}
	ok, err := l.t.Renew(ctx, l.name, l.tok, now+WorkerTTL.Milliseconds())
	if err == nil && !ok {
		err = fmt.Errorf("the lease %q is another holder's now", l.name)
	}
	if err != nil {
		return err
	}
	l.until = now + WorkerTTL.Milliseconds()
	return nil
}

// Renew renews the lease now: from here on the other side sees it again.
func (l *Lease) Renew(ctx context.Context) error { return l.renew(ctx) }

// Lapsed says whether the lease expired at some moment since it was taken
// or last confirmed: the other side may have started then.
func (l *Lease) Lapsed(ctx context.Context) (bool, error) {
	now, err := l.t.Clock(ctx, nil)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil && now >= l.until {
		l.lapsed = true
	}
	return l.lapsed, err
}

// Confirm clears a lapse once the holder has renewed the lease and made
// sure of what the other side did meanwhile.
func (l *Lease) Confirm() {
	l.mu.Lock()
	l.lapsed = false
	l.mu.Unlock()
}

// hold takes the lease name and renews it every third of WorkerTTL until
// release; what names it in errors and logs.
func (l *Ledger) hold(ctx context.Context, name, what string, log *slog.Logger) (*Lease, error) {
	t, tok := l.Tables(), token()
	now, err := t.Clock(ctx, nil)
	if err == nil {
		_, err = t.Take(ctx, name, tok, now, now+WorkerTTL.Milliseconds())
	}
	if err != nil {
		return &Lease{Release: func() {}}, fmt.Errorf("take %s: %w", what, err)
	}
	lease := &Lease{t: t, name: name, tok: tok, until: now + WorkerTTL.Milliseconds()}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := ingest.NewTicker(WorkerTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := lease.renew(ctx); err != nil && ctx.Err() == nil {
				log.Warn("renew "+what, ingest.LogErr, err)
			}
		}
	}()
	lease.Release = func() {
		cancel()
		<-done
		rctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		if err := t.Release(rctx, name, tok); err != nil {
			log.Warn("release "+what, ingest.LogErr, err)
		}
	}
	return lease, nil
}

// Workers are the workers whose lease on the database is in force by its
// clock: those that renewed it within WorkerTTL.
func (l *Ledger) Workers(ctx context.Context) ([]Worker, error) {
	var out []Worker
	err := l.leases(ctx, workerLease, func(rest string, renewed time.Time) {
		host, pid, _ := strings.Cut(rest, " ")
		w := Worker{Host: host, Renewed: renewed}
		w.PID, _ = strconv.Atoi(pid)
		out = append(out, w)
	})
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	return out, nil
}

// CopyWorkers are the workers on copies of the database whose lease here
// is in force (HoldCopyWorker).
func (l *Ledger) CopyWorkers(ctx context.Context) ([]CopyWorker, error) {
	var out []CopyWorker
	err := l.leases(ctx, copyWorkerLease, func(rest string, renewed time.Time) {
		host, rest, _ := strings.Cut(rest, " ")
		pid, copy, _ := strings.Cut(rest, " ")
		w := CopyWorker{Worker: Worker{Host: host, Renewed: renewed}, Copy: copy}
		w.PID, _ = strconv.Atoi(pid)
		out = append(out, w)
	})
	if err != nil {
		return nil, fmt.Errorf("workers on copies: %w", err)
	}
	return out, nil
}

// leases calls each with what follows prefix in the name of every lease
// in force by the database's clock, and when it was last renewed.
func (l *Ledger) leases(ctx context.Context, prefix string, each func(rest string, renewed time.Time)) error {
	now, err := l.turns.Clock(ctx, nil)
	if err != nil {
		return err
	}
	rows, err := l.r.QueryContext(ctx, `SELECT name, expires_ms FROM locks WHERE name LIKE ? AND expires_ms > ? ORDER BY name`,
		prefix+"%", now) // no prefix holds a LIKE wildcard
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var expires int64
		if err := rows.Scan(&name, &expires); err != nil {
			return err
		}
		each(strings.TrimPrefix(name, prefix), time.UnixMilli(expires-WorkerTTL.Milliseconds()))
	}
	return rows.Err()
}

// token is a random hex string: the lease holder's proof.
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
