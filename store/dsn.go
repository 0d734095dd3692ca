package store

import (
	"fmt"
	"net/url"
)

// WALLimit is the size the WAL is cut back to after a checkpoint
// (journal_size_limit): without it SQLite keeps the WAL at its largest
// until the last connection closes, so one large write (a prune, an
// upgrade) would leave a daemon beside a WAL of that size.
const WALLimit = 64 << 20

// WALCheckpointAt is how much the WAL holds before the commit that takes
// it past copies it into the database (SQLite's wal_autocheckpoint, which
// counts pages). SQLite's own mark, a thousand pages, has a daemon that
// commits a little at a time (a batch of counts, a spend of quota) copy
// the same hot pages into the file over and over, each copy a write and a
// sync; at this mark a page is copied once for many commits, as the prune
// does. It stays within WALLimit.
const WALCheckpointAt = 24 << 20

// defaultPageSize is SQLite's page size, which ingest never changes.
const defaultPageSize = 4096

// DSN is the data source name every connection to the database uses.
// Pragmas sit in the DSN so that each pooled connection gets them, busy
// timeout first; WAL lets readers run beside the one writer; immediate
// transactions take the write lock up front instead of failing to upgrade.
func DSN(path string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", WALLimit))
	q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", WALCheckpointAt/defaultPageSize))
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	}
	q.Set("_txlock", "immediate")
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

// ReadOnlyDSN is the data source name of a connection that never writes:
// mode=ro, or immutable=1 when the file cannot change under it (a
// read-only directory), which needs no shared-memory file.
func ReadOnlyDSN(path string, immutable bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "query_only(1)")
	if immutable {
		q.Set("immutable", "1")
	} else {
		q.Set("mode", "ro")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}
