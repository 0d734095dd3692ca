package store

import (
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"
)

// wordsFunc is the SQL function that turns text into the words the search
// index holds (indexWords). The index's triggers call it, so every
// connection this driver opens must have it: it is registered once, for
// the whole process, before any database is opened. A tool without it (the
// sqlite3 shell) can read the database but cannot write videos: the
// triggers fail rather than leave the index behind.
const wordsFunc = "ingest_words"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(wordsFunc, 1, words)
}

func words(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
	switch v := args[0].(type) {
	case nil:
		return "", nil
	case string:
		return indexWords(v), nil
	case []byte:
		return indexWords(string(v)), nil
	default:
		return indexWords(fmt.Sprint(v)), nil
	}
}
