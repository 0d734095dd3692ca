package store

// UseDriver makes the store open its connections with the database/sql
// driver registered as name (plan_test.go's recorder), for the test binary.
func UseDriver(name string) { driverName = name }
