package buildinfo

import (
	"strings"
	"testing"

	"github.com/ingestworks/ingest"
)

// What the build stamped wins over the module's VCS stamping, and the
// version is always the release.
func TestReadKeepsTheStamp(t *testing.T) {
	b := Read("0123456789ab", "2026-11-21T09:00:00Z")
	if b.Revision != "0123456789ab" || b.Built != "2026-11-21T09:00:00Z" || b.Version != ingest.Release() {
		t.Fatalf("got %+v, want the stamped revision and time and the release %s", b, ingest.Release())
	}
	want := "ingest " + ingest.Release() + " (revision 0123456789ab, built 2026-11-21T09:00:00Z, go"
	if !strings.HasPrefix(b.String(), want) {
		t.Errorf("got %q, want it to start with %q", b.String(), want)
	}
	if b := Read("", ""); b.Revision == "" || (b.Built == "" && strings.Contains(b.String(), "built")) {
		t.Errorf("unstamped: got %+v (%s); want a revision, unknown at worst, and no built when none", b, b)
	}
}
