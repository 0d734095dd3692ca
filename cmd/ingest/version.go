package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/util/buildinfo"
)

// revision, built, since and dirty are set at build time (make build:
// -ldflags "-X main.revision=... -X main.built=... -X main.since=... -X
// main.dirty=..."), so that a build without VCS stamping (-buildvcs=false,
// a source tarball, a container build without .git) still says what it
// was built from, and how far past its release (buildinfo.Read).
var (
	revision = ""
	built    = ""
	since    = ""
	dirty    = ""
)

func readBuildInfo() buildinfo.Info { return buildinfo.Read(revision, built, since, dirty == "true") }

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
