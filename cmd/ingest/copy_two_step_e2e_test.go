package main

import (
	"database/sql"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// A copy in two steps beside a daemon: the bulk while the daemon runs, a
// worker writes the source meanwhile, the daemon stops when the copy says
// so, and the copy carries what changed since. The target then holds every
// row the source holds (its sums' source side is the source as it ended),
// the source notes its changes no more, and the workers on the target spend
// within the default pool's 40 units. The other worker also tracks (the
// stats pool, as the daemon's hourly tracking does when its slot falls in
// the copy): the fake's charge is held to each pool's limit, never all
// pools' units to one pool's.
func TestDBCopyInTwoStepsBesideADaemon(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	src := h.db()
	target := h.withPostgres()
	h.set("INGEST_DB", src)
	p := h.start("run", "--every", "1m", "--regions", "US,GB")
	db := openDB(t, src)
	if !waitFor(cmdTimeout, func() bool {
		var n int64
		err := db.QueryRow(`SELECT count(*) FROM runs WHERE status = 'completed'`).Scan(&n)
		return (err == nil && n >= 2) || p.exited()
	}) {
		t.Fatalf("the daemon completed no pass:\n%s", p.out)
	}
	c := h.start("db", "copy", "--two-step", "--to", target)
	if !waitFor(longTimeout, func() bool { return strings.Contains(c.out.String(), "stop the worker on") || c.exited() }) {
		t.Fatalf("the copy never asked to stop the worker:\n%s", c.out)
	}
	if c.exited() {
		t.Fatalf("the copy ended before the worker stopped:\n%s", c.out)
	}
	// Another worker writes the source after the bulk: a pass, its
	// entries, videos and calls, and tracking's calls in the stats pool.
	h.mustRun(0, "run", "--once", "--regions", "DE,FR", "--track-every", "1h")
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, p.out)
	}
	if code, ok := c.wait(longTimeout); !ok || code != 0 {
		t.Fatalf("the copy did not end with 0 (%d, exited %v):\n%s", code, ok, c.out)
	}
	out := c.out.String()
	for _, want := range []string{"the bulk is copied", "carried what changed since the bulk", "is ready: start the worker on it now",
		"every table's rows and checksum agree"} {
		if !strings.Contains(out, want) {
			t.Errorf("the two-step copy does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "DIFFERS") || strings.Contains(out, pgPassword) {
		t.Errorf("the two-step copy's sums differ, or it printed the password:\n%s", out)
	}
	written := regexp.MustCompile(`carried what changed since the bulk: (\d+) rows written again`).FindStringSubmatch(out)
	if written == nil || written[1] == "0" {
		t.Errorf("the copy carried no row written after the bulk:\n%s", out)
	}
	for _, table := range []string{"runs", "trending_entries", "videos", "ledger", "quota_log"} {
		m := regexp.MustCompile(`(?m)^` + table + `\s+(\d+)\s+\S+\s+(\d+)\s`).FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no sums of %s:\n%s", table, out)
			continue
		}
		want := queryInt(t, db, `SELECT count(*) FROM `+table)
		if m[1] != strconv.FormatInt(want, 10) || m[2] != m[1] {
			t.Errorf("%s: the source holds %d rows, the copy summed %s on the source and %s on the target", table, want, m[1], m[2])
		}
	}
	if n := queryInt(t, db, `SELECT count(*) FROM sqlite_schema WHERE name LIKE 'copy_%'`); n != 0 {
		t.Errorf("the source still notes its changes: %d tables and triggers named copy_*", n)
	}
	onSource := h.fake.ChargedBuckets(testKey)
	if onSource[fakeyt.BucketStats] == 0 {
		t.Errorf("nothing was charged in the stats pool on the source: the run after the bulk did not track")
	}
	h.set("INGEST_DB", target)
	h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	if charged := h.fake.ChargedBuckets(testKey); charged[fakeyt.BucketDefault] > 40 {
		t.Errorf("the upstream charged %d units in the default pool (%d on the source), over its 40; what each side's ledger "+
			"holds against what the upstream was asked:\n%s", charged[fakeyt.BucketDefault], onSource[fakeyt.BucketDefault],
			ledgerAgainstRequests(h, map[string]*sql.DB{"source": db, "target": openPG(t, target)}))
	} else {
		t.Logf("%d of 40 charged in the default pool on the source, %d in all; %d in the stats pool", onSource[fakeyt.BucketDefault],
			charged[fakeyt.BucketDefault], charged[fakeyt.BucketStats])
	}
}

// ledgerAgainstRequests is, for an overspend's report, the units each
// database's ledger holds by operation and region (and those given back),
// beside the upstream's requests by path and region.
func ledgerAgainstRequests(h *harness, dbs map[string]*sql.DB) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(dbs)) {
		rows, err := dbs[name].Query(`SELECT op, coalesce(region, ''), count(*), sum(units),
  count(*) FILTER (WHERE EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.call_id = ledger.call_id)),
  min(at_ms), max(at_ms), min(seq), max(seq)
FROM ledger GROUP BY op, region ORDER BY min(at_ms)`)
		if err != nil {
			fmt.Fprintf(&b, "%s: %v\n", name, err)
			continue
		}
		for rows.Next() {
			var op, region string
			var calls, units, back, from, to, s0, s1 int64
			if err := rows.Scan(&op, &region, &calls, &units, &back, &from, &to, &s0, &s1); err != nil {
				fmt.Fprintf(&b, "%s: %v\n", name, err)
				break
			}
			fmt.Fprintf(&b, "%s ledger: %s %s: %d calls, %d units, %d given back, at %s..%s, written %d..%d\n", name, op, region,
				calls, units, back, time.UnixMilli(from).UTC().Format("15:04:05.000"), time.UnixMilli(to).UTC().Format("15:04:05.000"), s0, s1)
		}
		rows.Close()
	}
	fmt.Fprintf(&b, "upstream charged by bucket: %v\n", h.fake.ChargedBuckets(testKey))
	asked := map[string]int{}
	for _, u := range h.reqs.requests("") {
		asked[path.Base(u.Path)+" "+u.Query().Get("regionCode")]++
	}
	for _, k := range slices.Sorted(maps.Keys(asked)) {
		fmt.Fprintf(&b, "upstream asked: %s: %d\n", k, asked[k])
	}
	return b.String()
}

// The same from a PostgreSQL source into a SQLite file: the calls the
// source gains during the bulk are carried (a copy's workers never read a
// PostgreSQL source after it), and the target's runs spend within the
// default pool's 40.
func TestDBCopyInTwoStepsFromPostgres(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.tightCosts(40)
	target := h.db() + ".copy"
	h.withPostgres()
	p := h.start("run", "--every", "1m", "--regions", "US,GB")
	if !waitFor(cmdTimeout, func() bool { return strings.Count(p.out.String(), "msg=pass") >= 2 || p.exited() }) {
		t.Fatalf("the daemon completed no pass:\n%s", p.out)
	}
	// A PostgreSQL ledger is shared by every host on it: --live, whose
	// copy could not count their calls after it, is refused.
	if res := h.mustRun(2, "db", "copy", "--live", "--to", target); !strings.Contains(res.stderr, "pass --two-step instead of --live") {
		t.Errorf("db copy --live from PostgreSQL beside its worker does not name --two-step:\n%s", res)
	}
	c := h.start("db", "copy", "--two-step", "--to", target)
	if !waitFor(longTimeout, func() bool { return strings.Contains(c.out.String(), "stop the worker on") || c.exited() }) {
		t.Fatalf("the copy never asked to stop the worker:\n%s", c.out)
	}
	h.mustRun(0, "run", "--once", "--regions", "DE,FR")
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(cmdTimeout); !ok || code != 0 {
		t.Fatalf("the daemon did not stop cleanly on SIGTERM (%d, exited %v):\n%s", code, ok, p.out)
	}
	if code, ok := c.wait(longTimeout); !ok || code != 0 {
		t.Fatalf("the copy did not end with 0 (%d, exited %v):\n%s", code, ok, c.out)
	}
	out := c.out.String()
	if !strings.Contains(out, "every table's rows and checksum agree") || strings.Contains(out, pgPassword) {
		t.Errorf("the two-step copy from PostgreSQL did not agree, or printed the password:\n%s", out)
	}
	m := regexp.MustCompile(`(?m)^ledger\s+(\d+)\s+\S+\s+(\d+)\s`).FindStringSubmatch(out)
	db := openDB(t, target)
	if n := queryInt(t, db, `SELECT count(*) FROM ledger`); m == nil || m[2] != strconv.FormatInt(n, 10) {
		t.Errorf("the target holds %d ledger rows; the copy's sums: %v\n%s", n, m, out)
	}
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE region IN ('DE', 'FR')`); n == 0 {
		t.Errorf("the run on the source after the bulk is not on the target:\n%s", out)
	}
	onSource := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]
	h.set("INGEST_DB", target)
	h.mustRun(0, "run", "--once")
	h.mustRun(0, "run", "--once")
	if charged := h.fake.ChargedBuckets(testKey)[fakeyt.BucketDefault]; charged > 40 {
		t.Errorf("the upstream charged %d units in the default pool (%d on the source), over its 40", charged, onSource)
	} else {
		t.Logf("%d of 40 charged in the default pool on the source, %d in all", onSource, charged)
	}
}
