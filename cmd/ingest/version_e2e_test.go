package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/store"
)

// A plain go build (this test's binary has no -ldflags, as a Dockerfile's
// build without make's arguments) names the release in VERSION and, as it
// cannot count how far past it is, says so after a "+" (the revision Go's
// VCS stamping gives, or unknown): never the release's bare version.
// --json adds the schema versions.
func TestVersionNamesTheRelease(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := strings.TrimSpace(string(fileBytes(t, "../../VERSION")))
	if out := h.mustRun(0, "version").stdout; !regexp.MustCompile(`^ingest ` + regexp.QuoteMeta(want) + `\+(g[0-9a-f]{12}|unknown)(\.dirty)? \(revision `).MatchString(out) {
		t.Errorf("ingest version: %q, want ingest %s+gREV (revision ...", out, want)
	}
	var v versionJSON
	res := h.mustRun(0, "version", "--json")
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, res)
	}
	if !strings.HasPrefix(v.Version, want+"+") || v.Revision == "" || v.Go == "" || v.Schema.SQLite != store.SchemaVersion || v.Schema.Postgres != store.PGSchemaVersion {
		t.Errorf("version --json = %+v, want version %s and schema sqlite %d, postgres %d", v, want, store.SchemaVersion, store.PGSchemaVersion)
	}
}

// make build stamps the revision and the date, so that a build without
// VCS stamping (no .git, -buildvcs=false) still says what it is.
func TestMakeBuildStampsVersionWithoutVCS(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	rev, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	bin := t.TempDir()
	cmd := exec.Command("make", "-C", "../..", "build", "BIN="+bin)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(bin, "ingest"), "version").Output()
	if err != nil {
		t.Fatalf("ingest version: %v", err)
	}
	want := strings.TrimSpace(string(rev))
	if !strings.Contains(string(out), "revision "+want) || !regexp.MustCompile(`built \d{4}-\d\d-\d\dT`).Match(out) {
		t.Errorf("ingest version of make build with -buildvcs=false: %q, want revision %s and a build date", out, want)
	}
	// How far past the release: the commits since the one that last
	// changed VERSION, as git counts them.
	release := strings.TrimSpace(string(fileBytes(t, "../../VERSION")))
	last, err := exec.Command("git", "log", "-1", "--format=%H", "--", "../../VERSION").Output()
	if err != nil {
		t.Fatal(err)
	}
	count, err := exec.Command("git", "rev-list", "--count", strings.TrimSpace(string(last))+"..HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	past := release + " "
	if n := strings.TrimSpace(string(count)); n != "0" {
		past = release + "+" + n + ".g" + want
	}
	if !strings.HasPrefix(string(out), "ingest "+past) {
		t.Errorf("ingest version of make build: %q, want it to start with ingest %s", out, past)
	}
}
