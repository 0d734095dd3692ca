package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version, revision and built are set at build time (make build:
// -ldflags "-X main.version=... -X main.revision=... -X main.built=..."),
// so that a build without VCS stamping (-buildvcs=false, a source tarball,
// a container build without .git) still says what it was built from;
// otherwise they come from the module's build info.
var (
	version  = ""
	revision = ""
	built    = ""
)

// buildInfo is what `ingest version` prints and ingest_build_info exports.
type buildInfo struct {
	Version   string
	Revision  string
	Built     string // the commit's time (VCS) or the build's (make), RFC 3339; "" when unknown
	GoVersion string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: revision, Built: built, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12 && b.Revision == "":
				b.Revision = s.Value[:12]
			case s.Key == "vcs.time" && b.Built == "":
				b.Built = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if b.Revision == "" {
		b.Revision = "unknown"
	}
	return b
}

func (b buildInfo) String() string {
	if b.Built == "" {
		return fmt.Sprintf("ingest %s (revision %s, %s)", b.Version, b.Revision, b.GoVersion)
	}
	return fmt.Sprintf("ingest %s (revision %s, built %s, %s)", b.Version, b.Revision, b.Built, b.GoVersion)
}

func newVersionCmd() *cobra.Command {
	return uses(&cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), readBuildInfo())
		},
	})
}
