// Package partition runs several real ingest daemons, each in a network
// namespace of its own, beside Redis and the fake upstream in theirs, all
// joined by a bridge in a namespace that reaches nothing outside, while a
// nemesis drawn from a printed seed cuts and heals links and kills and
// stops hosts; then it reads the whole history and gives its verdict: the
// upstream's charge in every trailing window within the limit and the
// fail-open budgets, and every page charged in some host's ledger
// (docs/testing.md, "Partitions"). It holds only its test.
package partition
