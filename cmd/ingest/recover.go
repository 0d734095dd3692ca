package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/store"
)

func newDBRecoverCmd(s *settings) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "recover --out NEW.db",
		Short: "Salvage the rows of a damaged SQLite database that still read into a new file (costs no quota)",
		Long: `recover reads the SQLite file --db names as it is, page by page, and writes
every row that still reads into NEW.db, a new database of this version's
schema: each table's pages are walked from its root, a page overwritten by
anything else is skipped with the rows on and under it, and the new database
keeps what its constraints accept. The search index is built as the videos
arrive. The damaged file is only read.

It prints each table's rows kept, about how many were lost (the unreadable
pages at the rows a readable page of the table holds, and the rows the new
database refused) and the pages that did not read, then SQLite's integrity
check of NEW.db. Check it (ingest check --db NEW.db), then move it in place
of the damaged file, with no -wal file of the old one beside it.

--out must not exist (exit 2): recover writes only a new file. It needs no
sqlite3: the one Debian ships cannot read this schema's search index, and its
.recover salvages nothing of it.`,
		Example: `  ingest db recover --db ingest.db --out salvaged.db`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDBRecover(cmd.Context(), cmd.OutOrStdout(), s, out)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the new SQLite file to write the rows that read into; must not exist")
	return cmd
}

func runDBRecover(ctx context.Context, w io.Writer, s *settings, out string) error {
	if err := checkRecoverOut(s, out); err != nil {
		return err
	}
	got, dst, err := s.host().Salvage(ctx, out, func(t dbcopy.Salvaged, done, total int64) {
		fmt.Fprintf(s.stderr, "db recover: %s: %d rows kept, about %d lost, %d pages unreadable (%d of %d pages read)\n",
			t.Table, t.Kept, t.Lost(), t.Unreadable, done, total)
	})
	if dst == nil {
		return err
	}
	if err == nil {
		err = integrity(ctx, dst.DB)
	}
	dst.Close()
	if err != nil {
		removeDB(out)
		return fmt.Errorf("db recover: %s: %w (nothing is left at %s)", s.dbName(), err, out)
	}
	kept, lost := printSalvage(w, got)
	fmt.Fprintf(s.stderr, "db recover: %d rows of %s are in %s, about %d lost; its integrity check is ok: "+
		"check it with ingest check --db %s, then move it in place of the damaged file\n", kept, s.dbName(), out, lost, out)
	return nil
}

// checkRecoverOut refuses an --out that is missing, exists, is not a
// file's path, or names the damaged file.
func checkRecoverOut(s *settings, out string) error {
	switch {
	case out == "":
		return usageErrorf("db recover: --out is required: the new file to write the rows that still read into")
	case store.IsURL(s.db):
		return usageErrorf("db recover: --db %s is a PostgreSQL database: recover reads a SQLite file; a server's data is salvaged by PostgreSQL's own tools", s.dbName())
	case store.IsURL(out):
		return usageErrorf("db recover: --out: recover writes a SQLite file, not a URL (db copy carries the salvage into PostgreSQL after)")
	case !store.Exists(s.db):
		return usageErrorf("db recover: no database at %s (point --db / INGEST_DB at the damaged file)", s.dbName())
	case store.Where(out) == store.Where(s.db):
		return usageErrorf("db recover: --out names the damaged file --db names (%s): write into a new file", s.dbName())
	}
	if _, err := os.Lstat(out); err == nil {
		return usageErrorf("db recover: --out %s exists: name a new file (recover never writes over one)", out)
	}
	if err := store.CheckPath(out, true); err != nil {
		return usageErrorf("db recover: --out: %w", err)
	}
	return nil
}

// integrity runs SQLite's integrity check of the salvage.
func integrity(ctx context.Context, db *store.DB) error {
	var got string
	if err := db.Reader().QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&got); err != nil {
		return fmt.Errorf("integrity check of the salvage: %w", err)
	}
	if got != "ok" {
		return fmt.Errorf("integrity check of the salvage: %s", got)
	}
	return nil
}

// removeDB removes a SQLite file and its WAL's files.
func removeDB(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
}

// printSalvage prints each table's rows kept and lost, and returns the sums.
func printSalvage(w io.Writer, got []dbcopy.Salvaged) (kept, lost int64) {
	fmt.Fprintf(w, "%-18s %12s %12s %16s\n", "TABLE", "ROWS KEPT", "ABOUT LOST", "UNREADABLE PAGES")
	for _, t := range got {
		fmt.Fprintf(w, "%-18s %12d %12d %16d\n", t.Table, t.Kept, t.Lost(), t.Unreadable)
		kept, lost = kept+t.Kept, lost+t.Lost()
	}
	return kept, lost
}
