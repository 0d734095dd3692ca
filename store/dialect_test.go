package store

// isPG says whether db is a PostgreSQL store, for tests whose figures
// differ between the databases.
func isPG(db *DB) bool {
	_, ok := db.d.(pgDialect)
	return ok
}
