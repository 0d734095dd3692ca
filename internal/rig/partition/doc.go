// Package partition runs several real ingest daemons, each in a network
// namespace of its own, beside a Redis primary and its replica, PostgreSQL
// and the fake upstream in theirs, all joined by a bridge in a namespace
// that reaches nothing outside, while a nemesis drawn from a printed seed
// cuts and heals links, kills and stops hosts and fails Redis over; then
// it reads the whole history and gives its verdict by what was configured,
// never by what the system planned: the ledgers' metered calls in every
// trailing window within the limit, the upstream's charge within the limit
// plus the unmetered grants, every call charged matched one to one to a
// ledger's call or a stored page, a workload that made every limiter
// refuse, and every chart's gaps within the cadence the pool sustains plus
// the outage (docs/testing/partitions.md). It holds only its test.
//
// What is where: make partition: real daemons in network namespaces of their
// own (a bridge in its own namespace, nothing routed out), a Redis primary
// and its replica, PostgreSQL and the fake upstream in theirs, a nemesis
// from a printed seed, and the checker of the history, which reads the
// PostgreSQL ledger with pgx (its test only).
package partition
