package dbcopy

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/ingestworks/ingest/store"
)

// A backup (ingest db backup, run --backup-to) is a SQLite file's copy made
// by SQLite's backup API while its worker writes (store's DB.Backup), held
// to the source as a copy is: each table's rows and hash, the source's
// summed in the one read the copy is made of (sums.go).

// Backup copies the SQLite database src into the file into and returns
// the sums of src's tables as the copy holds them: what Verify holds the
// copy to once it is opened.
func Backup(ctx context.Context, src *store.DB, into string) ([]TableSums, error) {
	var want []Sum
	err := src.Backup(ctx, into, func(c *sql.Conn) error {
		var err error
		want, err = sumAll(ctx, c, sqliteDialect{})
		if err != nil {
			err = fmt.Errorf("sum %w", err)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]TableSums, len(copyTables))
	for i, t := range copyTables {
		out[i] = TableSums{Table: t.name, Source: want[i]}
	}
	return out, nil
}

// Verify runs SQLite's quick_check over the backup b, then sums its
// tables into sums' targets: it returns the tables whose sums differ from
// the source's.
func Verify(ctx context.Context, b *store.DB, sums []TableSums) ([]TableSums, error) {
	if err := b.QuickCheck(ctx); err != nil {
		return nil, err
	}
	got, err := sumAll(ctx, b.Reader(), sideOf(b).d)
	if err != nil {
		return nil, fmt.Errorf("sum %s: %w", b.Path(), err)
	}
	var differ []TableSums
	for i := range sums {
		if sums[i].Target = got[i]; !sums[i].Same() {
			differ = append(differ, sums[i])
		}
	}
	return differ, nil
}
