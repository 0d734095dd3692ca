package buildinfo

import (
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

// What the build stamped wins over the module's VCS stamping, and a build
// of the release's own commit is the release.
func TestReadKeepsTheStamp(t *testing.T) {
	b := Read("0123456789ab", "2026-11-21T09:00:00Z", "0", false)
	if b.Revision != "0123456789ab" || b.Built != "2026-11-21T09:00:00Z" || b.Version != ingest.Release() {
		t.Fatalf("got %+v, want the stamped revision and time and the release %s", b, ingest.Release())
	}
	want := "ingest " + ingest.Release() + " (revision 0123456789ab, built 2026-11-21T09:00:00Z, go"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("got %q, want it to start with %q", b.String(), want)
	}
	if b := Read("", "", "", false); b.Revision == "" || (b.Built == "" && strings.Contains(b.String(), "built")) {
		t.Errorf("unstamped: got %+v (%s); want a revision, unknown at worst, and no built when none", b, b)
	}
}

// A build past its release says how far past, and one that cannot count
// never claims the release's bare version.
func TestVersionSaysABuildPastItsRelease(t *testing.T) {
	for _, c := range []struct {
		since, revision string
		dirty           bool
		want            string
	}{
		{"0", "0123456789ab", false, "0.3.0"},
		{"0", "0123456789ab", true, "0.3.0+dirty"},
		{"12", "0123456789ab", false, "0.3.0+12.g0123456789ab"},
		{"12", "0123456789ab", true, "0.3.0+12.g0123456789ab.dirty"},
		{"", "0123456789ab", false, "0.3.0+g0123456789ab"},
		{"", "unknown", false, "0.3.0+unknown"},
		{"", "unknown", true, "0.3.0+unknown.dirty"},
	} {
		if got := Version("0.3.0", c.since, c.revision, c.dirty); got != c.want {
			t.Errorf("Version(0.3.0, since %q, %s, dirty %v) = %q, want %q", c.since, c.revision, c.dirty, got, c.want)
		}
	}
	if b := Read("0123456789ab", "", "3", false); b.Version != ingest.Release()+"+3.g0123456789ab" {
		t.Errorf("three commits past the release: version %q", b.Version)
	}
}
