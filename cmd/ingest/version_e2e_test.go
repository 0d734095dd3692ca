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
}
