// Package buildinfo says what a binary was built from: its release
// (ingest.Release, embedded from the file VERSION, which no build can
// change), the source revision, the time of the commit or of the build,
// and the Go version.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/ingestworks/ingest"
)

// Info is what `ingest version` prints and ingest_build_info exports.
type Info struct {
	Version   string
	Revision  string
	Built     string // the commit's time (VCS) or the build's (make), RFC 3339; "" when unknown
	GoVersion string
}

// Read is the build, its revision and time as the build stamped them
// (make build's -ldflags -X; "" when it did not), else as the module's
// VCS stamping gives them: a build without .git still says what it was
// built from when make stamps it.
//
// The version is the release (the file VERSION) for a build of the
// release's own commit, and says how far past it any other build is, as
// build metadata: since is the count of commits since the one that last
// changed VERSION, as make stamps it ("0" at the release), and dirty says
// the tree had changes no commit holds. A build make did not stamp cannot
// count, and says so: the release, "+g" and the revision Go's VCS stamping
// gives, or "+unknown" without one, never the release's bare version.
func Read(revision, built, since string, dirty bool) Info {
	b := Info{Version: ingest.Release(), Revision: revision, Built: built, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12 && b.Revision == "":
				b.Revision = s.Value[:12]
			case s.Key == "vcs.time" && b.Built == "":
				b.Built = s.Value
			case s.Key == "vcs.modified" && since == "":
				dirty = dirty || s.Value == "true"
			}
		}
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	b.Version = Version(ingest.Release(), since, b.Revision, dirty)
	return b
}

// Version is release as a build names itself (Read): release alone at
// the release's commit (since "0", a clean tree), else with build
// metadata, "0.3.0+12.g0123456789ab", ".dirty" after it for a tree with
// uncommitted changes, "+g0123456789ab" when the count is unknown (since
// ""), "+unknown" when the revision is too.
func Version(release, since, revision string, dirty bool) string {
	var meta string
	switch {
	case since == "0":
	case since != "" && revision != "unknown":
		meta = since + ".g" + revision
	case since != "":
		meta = since
	case revision != "unknown":
		meta = "g" + revision
	default:
		meta = "unknown"
	}
	if dirty {
		meta = strings.TrimPrefix(meta+".dirty", ".")
	}
	if meta == "" {
		return release
	}
	return release + "+" + meta
}

func (b Info) String() string {
	if b.Built == "" {
		return fmt.Sprintf("ingest %s (revision %s, %s)", b.Version, b.Revision, b.GoVersion)
	}
	return fmt.Sprintf("ingest %s (revision %s, built %s, %s)", b.Version, b.Revision, b.Built, b.GoVersion)
}
