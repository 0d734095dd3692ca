// Package buildinfo says what a binary was built from: its release
// (ingest.Release, embedded from the file VERSION, which no build can
// change), the source revision, the time of the commit or of the build,
// and the Go version.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

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
func Read(revision, built string) Info {
	b := Info{Version: ingest.Release(), Revision: revision, Built: built, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12 && b.Revision == "":
				b.Revision = s.Value[:12]
			case s.Key == "vcs.time" && b.Built == "":
				b.Built = s.Value
			}
		}
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}

func (b Info) String() string {
	if b.Built == "" {
		return fmt.Sprintf("ingest %s (revision %s, %s)", b.Version, b.Revision, b.GoVersion)
	}
	return fmt.Sprintf("ingest %s (revision %s, built %s, %s)", b.Version, b.Revision, b.Built, b.GoVersion)
}
