package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time (make build: -ldflags "-X main.version=...");
// otherwise it comes from the module's build info.
var version = ""

// buildInfo is what `ingest version` prints and ingest_build_info exports.
type buildInfo struct {
	Version   string
	Revision  string
	GoVersion string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: "unknown", GoVersion: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				b.Revision = s.Value[:12]
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	return b
}

func (b buildInfo) String() string {
	return fmt.Sprintf("ingest %s (revision %s, %s)", b.Version, b.Revision, b.GoVersion)
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
