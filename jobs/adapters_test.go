package jobs_test

import (
	"github.com/ingestworks/ingest/fetch"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/store"
)

// The compiler checks here, beside the interfaces the jobs declare, that
// the adapters the commands wire in fit them.
var (
	_ jobs.Source   = (*fetch.Client)(nil)
	_ jobs.Searcher = (*fetch.Client)(nil)
	_ jobs.Sink     = (*store.DB)(nil)
	_ jobs.Limiter  = (*quota.Redis)(nil)
	_ jobs.Limiter  = (*quota.SQLite)(nil)
	_ jobs.Limiter  = (*quota.Postgres)(nil)
	_ jobs.Locker   = (*quota.Redis)(nil)
	_ jobs.Locker   = (*quota.SQLite)(nil)
	_ jobs.Locker   = (*quota.Postgres)(nil)
)
