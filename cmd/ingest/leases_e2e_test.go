package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/ledger"
)

// TestJobLeasesAreEachDatabases: hosts of databases of their own that
// share a Redis quota key prune each their own. A prune that another
// database's host runs, holding the job's lease in Redis as when two hosts
// prune at one slot, does not skip this database's; one that a host of
// this same database runs does.
func TestJobLeasesAreEachDatabases(t *testing.T) {
	h := newHarness(t)
	s := h.withRedis()
	h.mustRun(0, "quota", "apply", h.newFlag())
	h.mustRun(0, "run", "--once", "--regions", "US") // the database and its ledger id
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lock := "ingest:{" + ledger.KeyHash(testKey) + "}:lock:job:prune"
	hold := func(name string) {
		t.Helper()
		if err := c.Set(ctx, name, "another-host", 5*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The daemon's first prune, at a slot within a minute of its start:
	// pruned or skipped. Its schedule line names the job too, so the wait
	// is for the outcome's words. A lease Redis did not answer within the
	// limiter's bound (a loaded machine) says nothing of the lease, and the
	// daemon then runs on its in-process guard, as designed: that start is
	// tried again, a few times at most.
	prune := func() string {
		t.Helper()
		var out string
		for try := 0; try < 4; try++ {
			p := h.start("run", "--every", "1m", "--regions", "US")
			if !waitFor(3*time.Minute, func() bool {
				out := p.out.String()
				return strings.Contains(out, "msg=pruned job=prune") || strings.Contains(out, "prune skipped")
			}) {
				t.Fatalf("the daemon said nothing of its prune:\n%s", p.out)
			}
			p.signal(t, syscall.SIGTERM)
			p.wait(cmdTimeout)
			if out = p.out.String(); !strings.Contains(out, "lease unavailable") {
				return out
			}
		}
		t.Fatalf("the lease was unavailable at every start:\n%s", out)
		return ""
	}
	// Another database's host, of this version or an earlier one.
	// A daemon says a slot it leaves to another process at debug (a
	// replica's normal day); this test reads that line.
	h.set("INGEST_LOG_LEVEL", "debug")
	hold(lock)
	hold(lock + "@0123456789abcdef")
	if out := prune(); strings.Contains(out, "prune skipped") || !strings.Contains(out, "msg=pruned job=prune") {
		t.Errorf("a daemon while another database's host prunes: want this database pruned, got\n%s", out)
	}
	// A host of this database.
	id := queryString(t, openDB(t, h.db()), `SELECT value FROM ledger_notes WHERE name = 'ledger_id'`)
	hold(lock + "@" + id)
	if out := prune(); !strings.Contains(out, "prune skipped: already running in another process") {
		t.Errorf("a daemon while a host of this database prunes: want the prune skipped, got\n%s", out)
	}
}
