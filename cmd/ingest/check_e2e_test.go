package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// On a new host check says why it skips the key and how to check it, the
// command the tutorial gives.
func TestCheckSaysHowToCheckTheKeyOnANewHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "check")
	line := regexp.MustCompile(`(?m)^skip +key +(.*)$`).FindStringSubmatch(res.stdout)
	if line == nil || !strings.Contains(line[1], "`"+keyCheckRun+"`") || !strings.Contains(line[1], "ledger") {
		t.Fatalf("check on a new host: want the key skipped saying why and naming `%s`, got %s", keyCheckRun, res)
	}
	tutorial := string(fileBytes(t, "../../docs/tutorial.md"))
	if !strings.Contains(tutorial, keyCheckRun+"     # on a new host, this checks the key") {
		t.Errorf("docs/tutorial.md, with a real key, does not give %q as the way to check the key on a new host", keyCheckRun)
	}
	if strings.Contains(tutorial, "limiter, and the key (1 unit)") {
		t.Errorf("docs/tutorial.md still says check checks the key on any host")
	}
	res = h.mustRun(0, "run", "--once", "--regions", "US")
	if res := h.mustRun(0, "check"); !regexp.MustCompile(`(?m)^ok +key +accepted`).MatchString(res.stdout) {
		t.Errorf("check after the first run: want the key called and accepted, got %s", res)
	}
}

// A database in a directory that does not exist is exit 2 with the mkdir
// hint for check as for run, never a temporary file's path; a database
// file this user cannot write is not called writable.
func TestCheckSaysWhatRunSaysOfTheDatabase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	missing := filepath.Join(h.dir, "nodir", "ingest.db")
	h.set("INGEST_DB", missing)
	run := h.run("run", "--once", "--regions", "US")
	check := h.run("check", "--offline")
	for _, res := range []result{run, check} {
		out := res.stdout + res.stderr
		if res.code != 2 || !strings.Contains(out, "mkdir -p "+filepath.Dir(missing)) || !strings.Contains(out, "INGEST_DB") || strings.Contains(out, ".ingest-check") {
			t.Errorf("a missing directory: want exit 2 with the mkdir hint naming INGEST_DB, got %s", res)
		}
	}

	h.set("INGEST_DB", filepath.Join(h.dir, "ingest.db"))
	h.mustRun(0, "run", "--once", "--regions", "US")
	dir, err := os.MkdirTemp("", "ingest-rofile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin, db := filepath.Join(dir, "ingest"), filepath.Join(dir, "ingest.db")
	copyFile(t, ingestBin(t), bin, 0o755)
	copyFile(t, h.db(), db, 0o444)
	cmd := exec.Command(bin, "check", "--offline")
	cmd.Env = scratchEnv("INGEST_DB="+db, "YOUTUBE_API_KEY="+testKey)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "is read-only to this user") {
		t.Errorf("check on a read-only database file: want exit 2 saying it is read-only, got exit %d\n%s", code, out)
	}
}

// check creates no database, gives a reason on every line it skips, and
// without YOUTUBE_API_KEY says so instead of asking the limiter about an
// empty quota key.
func TestCheckCreatesNothingAndSaysWhy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "check")
	checkLines(t, res)
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if _, err := os.Stat(h.db() + suffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("check created %s (err %v):\n%s", h.db()+suffix, err, res)
		}
	}
	if h.fake.Requests() != 0 {
		t.Errorf("check called the upstream with no database to record the call in:\n%s", res)
	}
	if !regexp.MustCompile(`(?m)^skip +key +not called on a new host: .*check creates no database`).MatchString(res.stdout) {
		t.Errorf("check on a new host: want the key check skipped, saying why:\n%s", res)
	}

	h.unset("YOUTUBE_API_KEY")
	for _, args := range [][]string{{"check"}, {"check", "--offline"}} {
		res := h.mustRun(2, args...)
		checkLines(t, res)
		if strings.Contains(res.stdout, `quota key ""`) {
			t.Errorf("%v without a key asks about an empty quota key:\n%s", args, res)
		}
		if !regexp.MustCompile(`(?m)^skip +limiter +.*(YOUTUBE_API_KEY|INGEST_QUOTA_KEY)`).MatchString(res.stdout) ||
			!regexp.MustCompile(`(?m)^FAIL +settings +YOUTUBE_API_KEY is not set`).MatchString(res.stdout) {
			t.Errorf("%v without a key: want settings failed and the limiter skipped, naming YOUTUBE_API_KEY or INGEST_QUOTA_KEY:\n%s", args, res)
		}
	}
}

// checkLines checks that every line of check's table has a status, a
// name and something said: what was found, or why it was skipped.
func checkLines(t *testing.T, res result) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		if f := strings.Fields(line); len(f) < 3 {
			t.Errorf("check line %q says nothing after its name:\n%s", line, res)
		}
	}
}

// 7. check and version.
func TestCheckAndVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "check", "--offline")
	for _, name := range []string{"settings", "costs", "database", "limiter", "key"} {
		if !regexp.MustCompile(`(?m)^(ok|skip) +` + name + `\b`).MatchString(res.stdout) {
			t.Errorf("check --offline does not report %s:\n%s", name, res.stdout)
		}
	}
	if h.fake.Requests() != 0 {
		t.Errorf("check --offline called the upstream")
	}
	h.mustRun(0, "run", "--once", "--regions", "US") // check creates no database: the key is checked on one
	charged, ledger := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default")
	res = h.mustRun(0, "check")
	if !regexp.MustCompile(`(?m)^ok +key +accepted`).MatchString(res.stdout) || h.fake.Charged(testKey) != charged+1 ||
		ledgerUnits(t, h.db(), "default") != ledger+1 {
		t.Errorf("check: want the key accepted with one unit charged and in the ledger; charged %d\n%s", h.fake.Charged(testKey)-charged, res)
	}
	h.withRedis().Stop()
	res = h.mustRun(1, "check", "--offline")
	if !regexp.MustCompile(`(?m)^FAIL +limiter`).MatchString(res.stdout) {
		t.Errorf("check with Redis stopped does not fail the limiter:\n%s", res)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		if out := h.mustRun(0, args...).stdout; !strings.HasPrefix(out, "ingest ") {
			t.Errorf("%v: %q", args, out)
		}
	}
}

// TestCheckSaysTheLimiterRunsWithoutTheUpstreamClock: on a host with Redis
// and no database yet, the limiter is built without a ledger and the
// upstream's clock (quota.NoLedger, quota.NoUpstreamClock), and check's
// limiter line says so; once a run created the database, it has both.
func TestCheckSaysTheLimiterRunsWithoutTheUpstreamClock(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.mustRun(0, "quota", "apply", h.newFlag())
	limiterLine := regexp.MustCompile(`(?m)^\S+ +limiter +(.*)$`)
	res := h.mustRun(0, "check", "--offline")
	line := limiterLine.FindStringSubmatch(res.stdout)
	if line == nil || !strings.Contains(line[1], "without the upstream's clock") {
		t.Fatalf("check with Redis and no database: want the limiter line to say it runs without the upstream's clock, got %s", res)
	}
	h.mustRun(0, "run", "--once", "--regions", "US")
	res = h.mustRun(0, "check", "--offline")
	if line := limiterLine.FindStringSubmatch(res.stdout); line == nil || strings.Contains(line[1], "without") {
		t.Fatalf("check after the first run: want the limiter line without the choice, got %s", res)
	}
}
