package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
)

// smallDisk mounts a tmpfs of size (mount's syntax: 600k, 8m) on a new
// directory, a disk that fills as a real one does; it skips the test where
// this user may not mount.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): the full disk needs root", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// storedPages is how many chart pages the runs in the database stored.
func storedPages(t *testing.T, path string) int64 {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	return queryInt(t, openDB(t, path), `SELECT coalesce(sum(pages), 0) FROM runs`)
}

func TestDiskFullStopsBeforeTheNextCall(t *testing.T) {
	for _, tc := range []struct {
		name, size string
		somePages  bool
	}{
		{"no room at the start", "600k", false},
		{"the reserve reached part-way", "8m", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			db := filepath.Join(smallDisk(t, tc.size), "ingest.db")
			h.set("INGEST_DB", db)
			res := h.mustRun(1, "run", "--once")
			line := lastLine(res.stderr)
			if !strings.HasPrefix(line, "ingest: "+db+": the disk is full (") || !strings.Contains(line, " free in "+filepath.Dir(db)) ||
				!strings.Contains(line, "free space there or move the database") {
				t.Errorf("last line %q, want the path, the free space and the fix\n%s", line, res)
			}
			if n := strings.Count(res.stderr, "disk is full"); n != 1 {
				t.Errorf("the full disk said %d times, want once\n%s", n, res)
			}
			if strings.Contains(res.stderr, "lock") {
				t.Errorf("the full disk is blamed on a lock\n%s", res)
			}
			pages := storedPages(t, db)
			charged := h.fake.ChargedByOp(testKey)[ingest.OpVideosList]
			if charged != pages {
				t.Errorf("the fake charged %d videos.list calls, the database stored %d pages: want every charged page stored", charged, pages)
			}
			if (pages > 0) != tc.somePages {
				t.Errorf("%d pages stored, want some: %v", pages, tc.somePages)
			}
		})
	}
}

// damage writes bytes over pages in the middle of the SQLite file at path,
// as a disk that lost writes does, past the header SQLite checks at open.
func damage(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte{0xA5, 0x5A, 0xFF, 0x01}, 500)
	for pg := st.Size() / 4096 / 2; pg < st.Size()/4096/2+8; pg++ {
		if _, err := f.WriteAt(junk, pg*4096+100); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDamagedFileIsNamedWithItsFix(t *testing.T) {
	h := newHarness(t)
	h.mustRun(0, "run", "--once")
	damage(t, h.db())
	res := h.mustRun(1, "check", "--offline")
	if !strings.Contains(res.stdout, "FAIL  database   "+h.db()+" is damaged: SQLite's quick_check found ") ||
		!strings.Contains(res.stdout, "restore it from a backup (docs/operations/backups.md)") || !strings.Contains(res.stdout, "ingest db recover --db "+h.db()+" --out NEW.db") {
		t.Errorf("check does not name the damage and its fix\n%s", res)
	}
	before := len(h.reqs.requests("/videos"))
	res = h.mustRun(1, "run", "--once")
	line := lastLine(res.stderr)
	if !strings.HasPrefix(line, "ingest: "+h.db()+" is damaged: ") || !strings.Contains(line, "docs/operations/backups.md") ||
		!strings.Contains(line, "regions not run)") {
		t.Errorf("last line %q, want the damaged file named with its fix, and where the run stopped\n%s", line, res)
	}
	if n := strings.Count(res.stderr, "is damaged"); n != 1 {
		t.Errorf("the damage said %d times, want once\n%s", n, res)
	}
	// Which region meets the damage depends on where the pages it reads
	// lie; the run must stop at that one and ask for no chart after it.
	_, at, ok := strings.Cut(line, "(stopped at ")
	stop, _, _ := strings.Cut(at, ":")
	if !ok || stop == "" {
		t.Fatalf("last line %q names no region the run stopped at", line)
	}
	met := false
	for _, u := range h.reqs.requests("/videos")[before:] {
		r := u.Query().Get("regionCode")
		if met && r != stop {
			t.Errorf("videos.list for %s after the damage was met in %s: want the run stopped there", r, stop)
		}
		met = met || r == stop
	}
	if !met {
		t.Errorf("the run says it stopped at %s, but asked nothing for it", stop)
	}
}

func TestUpstreamThatKeepsFailingStopsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(*harness)
		cause string
	}{
		{"every call a 500", func(h *harness) { h.fake.FailNext(1<<30, 500) }, "HTTP 500 backendError"},
		{"malformed answers", func(h *harness) { h.fake.MalformNext(1 << 30) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.fault(h)
			res := h.mustRun(1, "run", "--once")
			line := lastLine(res.stderr)
			if !strings.HasPrefix(line, "ingest: 3 of 8 regions failed: US, GB, DE, each: "+tc.cause) ||
				!strings.Contains(line, "stopped after 3 failures in a row, 5 not run") || len(line) > 400 {
				t.Errorf("last line %q, want the three charts, the cause once and the stop, in a short line\n%s", line, res)
			}
			for _, r := range h.reqs.requests("/videos") {
				if c := r.Query().Get("regionCode"); c != "US" && c != "GB" && c != "DE" {
					t.Errorf("videos.list for %s: want no chart after the third failure", c)
				}
			}
			if pages := storedPages(t, h.db()); pages != 0 {
				t.Errorf("%d pages stored from a failing upstream", pages)
			}
		})
	}
}

// SIGHUP stops the daemon as SIGTERM does, and says so: the page in flight
// is stored and no run is left running.
func TestDaemonStopsCleanlyOnSIGHUP(t *testing.T) {
	h := newHarness(t)
	h.fake.SetLatency(200 * time.Millisecond)
	p := h.start("run", "--every", "1m", "--regions", "US,IN")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 50 }) {
		t.Fatalf("no page stored within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGHUP)
	code, ok := p.wait(10 * time.Second)
	if !ok || code != 0 {
		t.Fatalf("after SIGHUP: exited %v, code %d; want a clean stop, exit 0\n%s", ok, code, p.out)
	}
	if !strings.Contains(p.out.String(), "SIGHUP stops as SIGTERM does") || !strings.Contains(p.out.String(), "daemon stopped") {
		t.Errorf("SIGHUP not said in the log\n%s", p.out)
	}
	var pages int64
	for _, r := range runRows(t, openDB(t, h.db())) {
		if r.Status == "running" {
			t.Errorf("run %d (%s) left running after SIGHUP", r.ID, r.Region)
		}
		pages += int64(r.Pages)
	}
	if charged := h.fake.ChargedByOp(testKey)[ingest.OpVideosList]; charged != pages {
		t.Errorf("the fake charged %d chart pages, %d were stored", charged, pages)
	}
}

func TestUpstreamQuotaRefusalIsSaidAtInfo(t *testing.T) {
	h := newHarness(t)
	h.fake.ExhaustQuota(fakeyt.QuotaExceeded)
	res := h.mustRun(0, "run", "--once")
	if !strings.Contains(res.stderr, "level=INFO msg=\"the upstream refused: its daily quota is spent") ||
		!strings.Contains(res.stderr, "pool default blocked until ") || !strings.Contains(res.stderr, "until_local=") ||
		!strings.Contains(res.stderr, "until_utc=") {
		t.Errorf("the upstream's refusal is not said at info with its pool and time\n%s", res)
	}
	if n := strings.Count(res.stderr, "the upstream refused"); n != 1 {
		t.Errorf("said %d times, want once\n%s", n, res)
	}
	if pages := storedPages(t, h.db()); pages != h.fake.ChargedByOp(testKey)[ingest.OpVideosList] {
		t.Errorf("%d pages stored, %d charged", pages, h.fake.ChargedByOp(testKey)[ingest.OpVideosList])
	}
}

func TestSecondDaemonOnOneFileExitsNamingTheFirst(t *testing.T) {
	h := newHarness(t)
	p := h.start("run", "--every", "1h", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return strings.Contains(p.out.String(), "msg=pass region=US status=completed") }) {
		t.Fatalf("the first daemon's pass did not complete within 60s\n%s", p.out)
	}
	before := h.fake.Charged(testKey)
	res := h.mustRun(2, "run", "--every", "1h", "--regions", "US")
	line := lastLine(res.stderr)
	if !strings.HasPrefix(line, "ingest: "+h.db()+": another daemon already runs on this database (pid "+strconv.Itoa(p.cmd.Process.Pid)+", host ") ||
		!strings.Contains(line, ", since ") {
		t.Errorf("last line %q, want the first daemon's pid, host and start\n%s", line, res)
	}
	if spent := h.fake.Charged(testKey) - before; spent != 0 {
		t.Errorf("the second daemon spent %d units", spent)
	}
	h.mustRun(0, "run", "--once", "--regions", "GB")
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(30 * time.Second); !ok || code != 0 {
		t.Fatalf("first daemon: exited %v, code %d\n%s", ok, code, p.out)
	}
	// Its lock goes with it: the next daemon starts.
	q := h.start("run", "--every", "1h", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return strings.Contains(q.out.String(), "daemon") }) || q.exited() {
		t.Fatalf("a daemon after the first stopped did not start\n%s", q.out)
	}
}

// TestSecondDaemonThroughAnotherNameIsRefused: the lock is on the file,
// so every other name of it meets the first daemon's: a symlink, a hard
// link in another directory, a relative path and a bind mount.
func TestSecondDaemonThroughAnotherNameIsRefused(t *testing.T) {
	h := newHarness(t)
	p := h.start("run", "--every", "1h", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return strings.Contains(p.out.String(), "msg=pass region=US status=completed") }) {
		t.Fatalf("the first daemon's pass did not complete within 60s\n%s", p.out)
	}
	other := filepath.Join(h.dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink, hardlink := filepath.Join(other, "symlinked.db"), filepath.Join(other, "linked.db")
	if err := os.Symlink(h.db(), symlink); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(h.db(), hardlink); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"symlink": symlink, "hard link": hardlink, "relative path": "other/../ingest.db"}
	first := "another daemon already runs on this database (pid " + strconv.Itoa(p.cmd.Process.Pid) + ","
	before := h.fake.Charged(testKey)
	for name, db := range names {
		h.set("INGEST_DB", db)
		res := h.mustRun(2, "run", "--every", "1h", "--regions", "US")
		if line := lastLine(res.stderr); !strings.HasPrefix(line, "ingest: "+db+": "+first) {
			t.Errorf("through a %s: last line %q, want the first daemon's pid\n%s", name, line, res)
		}
	}
	if os.Geteuid() == 0 {
		if unshare, err := exec.LookPath("unshare"); err == nil {
			mnt := filepath.Join(h.dir, "mnt")
			os.Mkdir(mnt, 0o755)
			h.set("INGEST_DB", filepath.Join(mnt, "ingest.db"))
			cmd := h.bare(context.Background(), "run", "--every", "1h", "--regions", "US")
			cmd.Args = []string{unshare, "--mount", "--propagation", "private", "sh", "-c", `mount --bind "$1" "$2" && shift 2 && exec "$@"`, "sh", h.dir, mnt, ingestBin(t)}
			cmd.Args = append(cmd.Args, "run", "--every", "1h", "--regions", "US")
			cmd.Path = unshare
			out, err := cmd.CombinedOutput()
			if code := exitCode(err); code != 2 || !strings.Contains(string(out), ": "+first) {
				t.Errorf("through a bind mount: exit %d, want 2 naming the first daemon\n%s", code, out)
			}
		}
	} else {
		t.Log("a bind mount is not tried: it needs root")
	}
	if spent := h.fake.Charged(testKey) - before; spent != 0 {
		t.Errorf("the refused daemons spent %d units", spent)
	}
}

func TestCheckSaysAnUnreachableUpstreamForItsClock(t *testing.T) {
	h := newHarness(t)
	addr := closedAddr(t)
	h.set("YOUTUBE_ENDPOINT", "http://"+addr+"/")
	res := h.mustRun(1, "check")
	if !strings.Contains(res.stdout, "FAIL  clock      the upstream (http://"+addr+"/) cannot be reached to read its clock: dial tcp ") ||
		!strings.Contains(res.stdout, "check --youtube-endpoint / YOUTUBE_ENDPOINT and the network, or use check --offline") {
		t.Errorf("check's clock line does not say the upstream cannot be reached, with the fix\n%s", res)
	}
}

func TestTokensListOnNoDatabaseCreatesNone(t *testing.T) {
	h := newHarness(t)
	res := h.mustRun(0, "tokens", "list", "--json")
	if strings.TrimSpace(res.stdout) != "[]" || !strings.Contains(res.stderr, "no database at") {
		t.Errorf("want an empty list and the warning that there is no database\n%s", res)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, err := os.Stat(h.db() + suffix); err == nil {
			t.Errorf("tokens list created %s", h.db()+suffix)
		}
	}
}

func TestReadOnlyMountIsNamedSo(t *testing.T) {
	h := newHarness(t)
	dir := smallDisk(t, "8m")
	h.set("INGEST_DB", filepath.Join(dir, "ingest.db"))
	h.mustRun(0, "run", "--once", "--regions", "US")
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	res := h.mustRun(2, "run", "--once", "--regions", "US")
	if line := lastLine(res.stderr); !strings.Contains(line, "is on a read-only file system") || strings.Contains(line, "chmod") {
		t.Errorf("last line %q: want the read-only mount named, not chown or chmod\n%s", line, res)
	}
	h.mustRun(0, "report")
}

func TestEveryTakesWholeDays(t *testing.T) {
	h := newHarness(t)
	res := h.mustRun(0, "run", "--once", "--every", "1d", "--regions", "US")
	if !strings.Contains(res.stderr, "run --once") {
		t.Errorf("run --once --every 1d did not run\n%s", res)
	}
	res = h.mustRun(2, "run", "--once", "--every", "1x")
	if !strings.Contains(res.stderr, `--every`) || !strings.Contains(res.stderr, `want whole days (1d) or a duration`) {
		t.Errorf("a bad --every is not named with what it takes\n%s", res)
	}
}

// A read that meets a damaged page after the open (a search's index)
// names the file and the fix too.
func TestDamagedPageMetByASearchIsNamed(t *testing.T) {
	h := newHarness(t)
	h.mustRun(0, "run", "--once")
	f, err := os.OpenFile(h.db(), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	for pg := int64(3); pg < st.Size()/4096; pg += 3 {
		if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5, 0x5A, 0xFF, 0x01}, 200), pg*4096+200); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	res := h.mustRun(1, "search", "music")
	if line := lastLine(res.stderr); !strings.Contains(line, h.db()+" is damaged: restore it from a backup (docs/operations/backups.md)") {
		t.Errorf("last line %q: want the damaged file named with its fix\n%s", line, res)
	}
}

// A daemon backing off a failing upstream is seen: /readyz answers 503
// saying so, /metrics holds when the backoff ends, and each chart slot the
// backoff skips counts as a failure of its region, so that the shipped
// IngestRegionFailing (ingest_region_consecutive_failures >= 3) fires while
// nothing is fetched.
func TestBackingOffIsVisible(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.FailNext(1<<30, 500)
	listen, _ := anyAddr(t)
	_, port, _ := net.SplitHostPort(listen)
	base := "http://127.0.0.1:" + port
	// A pool that holds every chart at --every, so that each skipped slot
	// comes a minute after the one before; the daemon lives as long as
	// the wait for the third.
	h.tightCosts(100000)
	p := h.startFor(longTimeout+time.Minute, "run", "--every", "1m", "--regions", "US,GB,DE", "--listen", "127.0.0.1:"+port)
	if !waitFor(cmdTimeout, func() bool { return siteServed(base) || p.exited() }) || p.exited() {
		t.Fatalf("the daemon's listener never answered\n%s", p.out)
	}
	backingOff := func() bool {
		code, body := get(t, base+"/readyz")
		return code == 503 && strings.Contains(body, "backing off an upstream that fails every chart")
	}
	if !waitFor(cmdTimeout, func() bool { return backingOff() || p.exited() }) || p.exited() {
		t.Fatalf("/readyz never said the daemon backs off\n%s", p.out)
	}
	until := regexp.MustCompile(`(?m)^ingest_upstream_backoff_until_timestamp_seconds ([0-9.e+]+)$`)
	if _, body := get(t, base+"/metrics"); !until.MatchString(body) || until.FindStringSubmatch(body)[1] == "0" {
		t.Errorf("/metrics has no backoff's end while backing off:\n%s", until.FindString(body))
	}
	failing := regexp.MustCompile(`(?m)^ingest_region_consecutive_failures\{region="[A-Z]+"\} ([3-9]|[1-9][0-9]+)$`)
	// A scrape that fails (a busy machine's reset) is asked again; the
	// daemon's end is what fails the wait.
	if !waitFor(longTimeout, func() bool {
		return failing.MatchString(httpGet(base+"/metrics")) || p.exited()
	}) || p.exited() {
		body := httpGet(base + "/metrics")
		t.Errorf("no region reached 3 failures in a row while backing off (IngestRegionFailing would not fire):\n%s\n%s", regexp.MustCompile(`(?m)^ingest_region_consecutive_failures.*$`).FindAllString(body, -1), p.out)
	}
	if pages := storedPages(t, h.db()); pages != 0 {
		t.Errorf("%d pages stored from a failing upstream", pages)
	}
}

// A key the upstream rejects for good ends the daemon, exit 1, after
// FailuresInARow chart passes, each a call the fake charged and the ledger
// holds, with a last line naming the key and the fix.
func TestRejectedKeyEndsTheDaemon(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.BadKey(fakeyt.KeyInvalid)
	p := h.start("run", "--every", "1m", "--regions", "US,GB,DE,FR")
	code, ok := p.wait(cmdTimeout)
	if !ok {
		t.Fatalf("the daemon still runs %s after the key was rejected\n%s", cmdTimeout, p.out)
	}
	line := lastLine(p.out.String())
	if code != 1 || !strings.Contains(line, "the upstream rejected YOUTUBE_API_KEY") || !strings.Contains(line, "3 chart passes in a row") ||
		!strings.Contains(line, "set YOUTUBE_API_KEY") {
		t.Errorf("exit %d, last line %q; want 1 and the rejected key with its fix\n%s", code, line, p.out)
	}
	// "daemon stopped" is a clean stop's last line: a supervisor reading
	// it would not look for the error after it.
	if strings.Contains(p.out.String(), "daemon stopped") {
		t.Errorf("the daemon ended on an error and logged \"daemon stopped\" before it\n%s", p.out)
	}
	if charged, ledger := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default"); charged != ledger || charged > 5 {
		// A slot may start a fourth chart's pass beside the catch-up's three.
		t.Errorf("upstream charged %d, ledger holds %d: want the same, a call a chart at most (4) and the region catalogue's", charged, ledger)
	}
	if pages := storedPages(t, h.db()); pages != 0 {
		t.Errorf("%d pages stored with a rejected key", pages)
	}
}

// Truncated bodies are retried as a 5xx is: three of them in a row cost
// three attempts (charged by the upstream, kept in the ledger) and the run
// completes with every page stored.
func TestTruncatedBodiesAreRetried(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.MalformNext(3)
	res := h.mustRun(0, "run", "--once", "--regions", "US")
	want := int64(pagesFor(h.fake.ChartLength("US")))
	if pages := storedPages(t, h.db()); pages != want {
		t.Errorf("%d pages stored, want %d\n%s", pages, want, res)
	}
	if charged, ledger := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default"); charged != ledger || charged != want+1+3 {
		t.Errorf("upstream charged %d, ledger %d: want %d pages, the category names and 3 cut answers", charged, ledger, want)
	}
}

// A listen port another process holds and a --db that is a device are
// settings to change: exit 2 naming the fix, before any call, so that a
// supervisor does not restart into them.
func TestPortInUseAndADeviceAsDatabaseAreExit2(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US")
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	charged := h.fake.Charged(testKey)
	for _, args := range [][]string{
		{"run", "--once", "--regions", "US", "--listen", held.Addr().String()},
		{"serve", "--listen", held.Addr().String()},
	} {
		res := h.mustRun(2, args...)
		if line := lastLine(res.stderr); !strings.Contains(line, "address already in use") || !strings.Contains(line, "choose another port") {
			t.Errorf("last line %q: want the port in use named with its fix\n%s", line, res)
		}
	}
	if got := h.fake.Charged(testKey); got != charged {
		t.Errorf("%d units spent by runs refused their listener", got-charged)
	}
	// Nor is a database created for a daemon that cannot listen.
	fresh := filepath.Join(h.dir, "fresh.db")
	h.set("INGEST_DB", fresh)
	h.mustRun(2, "run", "--every", "1h", "--regions", "US", "--listen", held.Addr().String())
	if _, err := os.Stat(fresh); err == nil {
		t.Errorf("a run refused its listener created the database %s", fresh)
	}
	h.set("INGEST_DB", os.DevNull)
	res := h.mustRun(2, "run", "--once", "--regions", "US")
	if line := lastLine(res.stderr); !strings.Contains(line, "/dev/null is not a regular file") || !strings.Contains(line, "name a database file") {
		t.Errorf("last line %q: want /dev/null named with its fix\n%s", line, res)
	}
}
