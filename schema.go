package ingest

import _ "embed"

// Schema is schema.sql, the whole current schema of the database. The store
// applies it to a new database and upgrades older ones step by step.
//
//go:embed schema.sql
var Schema string
