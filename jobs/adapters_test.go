package jobs

import (
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// The compiler checks here, beside the interfaces the jobs declare, that
// the adapters the commands wire in fit them.
var (
	_ Source   = (*fetch.Client)(nil)
	_ Searcher = (*fetch.Client)(nil)
	_ Sink     = (*store.DB)(nil)
	_ Limiter  = (*quota.Redis)(nil)
	_ Limiter  = (*quota.SQLite)(nil)
	_ Limiter  = (*quota.Postgres)(nil)
	_ Locker   = (*quota.Redis)(nil)
	_ Locker   = (*quota.SQLite)(nil)
	_ Locker   = (*quota.Postgres)(nil)
)
