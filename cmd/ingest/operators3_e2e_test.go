package main

// End-to-end tests of what an operator reads, third pass: help and
// messages that say what happens, one exit code for one situation.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/store"
)

// quota apply --new on a key that already holds another configuration is
// refused and changes nothing; the same configuration again changes
// nothing; without --new the change is made.
func TestQuotaApplyNewReplacesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US") // the harness applies --new first
	h.tightCosts(9000)
	res := h.mustRun(2, "quota", "apply", h.newFlag())
	if !strings.Contains(res.stderr, "is not new") || !strings.Contains(res.stderr, "without --new") {
		t.Errorf("apply --new on a used key with another costs file: want it refused naming apply without --new, got %s", res)
	}
	if show := h.mustRun(0, "quota", "show"); !strings.Contains(show.stdout, "limiter:    limit 10000") {
		t.Errorf("a refused apply --new changed the limiter:\n%s", show.stdout)
	}
	h.unset("INGEST_COSTS")
	if res := h.mustRun(0, "quota", "apply", h.newFlag()); !strings.Contains(res.stdout, "nothing changed") {
		t.Errorf("apply --new with the configuration the limiter holds: want nothing changed, got %s", res)
	}
	h.tightCosts(9000)
	if res := h.mustRun(0, "quota", "apply"); !strings.Contains(res.stdout, "limit 10000, reserve 500, window 24h0m0s, day America/Los_Angeles -> limit 9000") {
		t.Errorf("apply without --new: want the change made, got %s", res)
	}
}

// On a new host check says why it skips the key and how to check it, the
// command the README gives.
func TestCheckSaysHowToCheckTheKeyOnANewHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	res := h.mustRun(0, "check")
	line := regexp.MustCompile(`(?m)^skip +key +(.*)$`).FindStringSubmatch(res.stdout)
	if line == nil || !strings.Contains(line[1], "`"+keyCheckRun+"`") || !strings.Contains(line[1], "ledger") {
		t.Fatalf("check on a new host: want the key skipped saying why and naming `%s`, got %s", keyCheckRun, res)
	}
	readme := string(fileBytes(t, "../../README.md"))
	if !strings.Contains(readme, keyCheckRun+"     # on a new host, this checks the key") {
		t.Errorf("README step 3 does not give %q as the way to check the key on a new host", keyCheckRun)
	}
	if strings.Contains(readme, "limiter, and the key (1 unit)") {
		t.Errorf("README step 3 still says check checks the key on any host")
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
	copyFile(t, ingestBin, bin, 0o755)
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

// A second signal stops a run at once, and the run is recorded as
// interrupted, not failed.
func TestSecondSignalIsAnInterruption(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(10 * time.Second)
	p := h.start("run", "--once", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return h.fake.Requests() >= 1 }) {
		t.Fatalf("no upstream call within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.signal(t, syscall.SIGINT)
	if _, ok := p.wait(cmdTimeout); !ok {
		t.Fatalf("still running after two signals\n%s", p.out)
	}
	rows := runRows(t, openDB(t, h.db()))
	if len(rows) != 1 || rows[0].Status != "interrupted" || !strings.Contains(rows[0].Message, "second signal") {
		t.Errorf("runs after a second signal: %+v, want one interrupted by the second signal\n%s", rows, p.out)
	}
}

// Help and messages that say what happens: backfill --max-units counts
// every pool; history --since in the future is refused, and a video off
// the charts since --since is not "never on a chart"; --keep is bounded;
// chart --language takes language codes, not words.
func TestHelpAndMessagesSayWhatHappens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	help := strings.Join(strings.Fields(h.mustRun(0, "backfill", "--help").stdout), " ")
	if strings.Contains(help, "units of the default pool") || !strings.Contains(help, "every pool's counted together") {
		t.Errorf("backfill --help: --max-units must say it counts every pool:\n%s", help)
	}
	h.mustRun(0, "run", "--once", "--regions", "US")
	var hits []hit
	if err := json.Unmarshal([]byte(h.mustRun(0, "search", "--json", "--limit", "1", "a").stdout), &hits); err != nil || len(hits) == 0 {
		t.Fatalf("no stored video to ask about: %v", err)
	}
	id := hits[0].ID
	if res := h.run("history", id, "--since", "2099-01-01"); res.code != 2 || !strings.Contains(res.stderr, "--since: 2099-01-01 is in the future") {
		t.Errorf("history --since 2099-01-01: want refused as in the future, got %s", res)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano) // after the run, to the nanosecond
	if res := h.mustRun(0, "history", id, "--since", now); strings.Contains(res.stdout, "never on a chart") || !strings.Contains(res.stdout, "not on a chart since") {
		t.Errorf("history --since now of a video the chart showed before: want \"not on a chart since\", got %s", res)
	}
	for _, args := range [][]string{{"prune", "--keep", "99999999d"}, {"run", "--once", "--keep", "99999999d"}} {
		if res := h.run(args...); res.code != 2 || !strings.Contains(res.stderr, "--keep: want at most 36500d") {
			t.Errorf("%v: want refused with the bound, got %s", args, res)
		}
	}
	if res := h.run("chart", "US", "--language", "klingon"); res.code != 2 || !strings.Contains(res.stderr, `--language: "klingon" is not a BCP-47 language tag`) {
		t.Errorf("chart --language klingon: want exit 2 saying it is no language tag, got %s", res)
	}
	if res := h.mustRun(0, "chart", "US", "--language", "tlh"); !strings.Contains(res.stdout, "no videos in tlh on this chart") {
		t.Errorf("chart --language tlh: want it said that no video is in tlh, got %s", res)
	}
}

// A plain go build (this test's binary has no -ldflags, as the Dockerfile's
// gives none for the version) names the release in VERSION; --json adds
// the schema versions.
func TestVersionNamesTheRelease(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := strings.TrimSpace(string(fileBytes(t, "../../VERSION")))
	if out := h.mustRun(0, "version").stdout; !strings.HasPrefix(out, "ingest "+want+" (revision ") {
		t.Errorf("ingest version: %q, want ingest %s (revision ...", out, want)
	}
	var v versionJSON
	res := h.mustRun(0, "version", "--json")
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, res)
	}
	if v.Version != want || v.Revision == "" || v.Go == "" || v.Schema.SQLite != store.SchemaVersion || v.Schema.Postgres != store.PGSchemaVersion {
		t.Errorf("version --json = %+v, want version %s and schema sqlite %d, postgres %d", v, want, store.SchemaVersion, store.PGSchemaVersion)
	}
}
