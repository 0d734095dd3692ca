package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/store"
)

// revision and built are set at build time (make build: -ldflags "-X
// main.revision=... -X main.built=..."), so that a build without VCS
// stamping (-buildvcs=false, a source tarball, a container build without
// .git) still says what it was built from; otherwise they come from the
// module's build info. The version is ingest.Release, embedded from the
// file VERSION: no build can give it another.
var (
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
	b := buildInfo{Version: ingest.Release(), Revision: revision, Built: built, GoVersion: runtime.Version()}
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

func (b buildInfo) String() string {
	if b.Built == "" {
		return fmt.Sprintf("ingest %s (revision %s, %s)", b.Version, b.Revision, b.GoVersion)
	}
	return fmt.Sprintf("ingest %s (revision %s, built %s, %s)", b.Version, b.Revision, b.Built, b.GoVersion)
}

// versionJSON is `ingest version --json`: the build, and the schema steps
// this binary reads and writes on each database.
type versionJSON struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Built    string `json:"built,omitempty"`
	Go       string `json:"go"`
	Schema   struct {
		SQLite   int `json:"sqlite"`
		Postgres int `json:"postgres"`
	} `json:"schema"`
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version (--json: and the schema versions)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := readBuildInfo()
			if !asJSON {
				fmt.Fprintln(cmd.OutOrStdout(), b)
				return nil
			}
			v := versionJSON{Version: b.Version, Revision: b.Revision, Built: b.Built, Go: b.GoVersion}
			v.Schema.SQLite, v.Schema.Postgres = store.SchemaVersion, store.PGSchemaVersion
			return writeJSON(cmd.OutOrStdout(), v)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object: version, revision, built, go, and schema.sqlite and schema.postgres, the schema versions this binary reads and writes")
	return uses(cmd)
}
