package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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
	t, name, tok := l.Tables(), workerLease+host+" "+strconv.Itoa(pid), token()
	expires := func(ctx context.Context) (int64, int64, error) {
		now, err := t.Clock(ctx, nil)
		return now, now + WorkerTTL.Milliseconds(), err
	}
	now, until, err := expires(ctx)
	if err == nil {
		_, err = t.Take(ctx, name, tok, now, until)
	}
	if err != nil {
		return func() {}, fmt.Errorf("take the worker's lease: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(WorkerTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_, until, err := expires(ctx)
			if err == nil {
				_, err = t.Renew(ctx, name, tok, until)
			}
			if err != nil && ctx.Err() == nil {
				log.Warn("renew the worker's lease on the database", ingest.LogErr, err)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		rctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		if err := t.Release(rctx, name, tok); err != nil {
			log.Warn("release the worker's lease on the database", ingest.LogErr, err)
		}
	}, nil
}

// Workers are the workers whose lease on the database is in force by its
// clock: those that renewed it within WorkerTTL.
func (l *Ledger) Workers(ctx context.Context) ([]Worker, error) {
	now, err := l.turns.Clock(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	rows, err := l.r.QueryContext(ctx, `SELECT name, expires_ms FROM locks WHERE name LIKE 'worker %' AND expires_ms > ? ORDER BY name`, now)
	if err != nil {
		return nil, fmt.Errorf("workers: %w", err)
	}
	defer rows.Close()
	var out []Worker
	for rows.Next() {
		var name string
		var expires int64
		if err := rows.Scan(&name, &expires); err != nil {
			return nil, fmt.Errorf("workers: %w", err)
		}
		host, pid, _ := strings.Cut(strings.TrimPrefix(name, workerLease), " ")
		w := Worker{Host: host, Renewed: time.UnixMilli(expires - WorkerTTL.Milliseconds())}
		w.PID, _ = strconv.Atoi(pid)
		out = append(out, w)
	}
	return out, rows.Err()
}

// token is a random hex string: the lease holder's proof.
func token() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
