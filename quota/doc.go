// Package quota is the limiter that keeps every worker inside one upstream
// quota. It has two backends with one contract: Redis, shared by every
// process and host that points at it, and an embedded one in the SQLite
// database, for a single host. A conformance suite runs against both.
//
// # The model
//
// A quota key names one upstream quota (a Google Cloud project). Inside it,
// pools are budgets of limit units per trailing window, less a reserve left
// for people; costs.yaml lists them and what each operation charges in each
// pool (search.list takes 100 units of default and 1 of search). Every
// worker that uses the same quota key and store draws from the same pools.
//
// Each pool is a sliding log with one entry per admitted call, not per unit,
// plus a running total of the units in the log. A decision drops the entries
// that left the window (now - window, now], takes their units off the total,
// and admits the call when total + cost fits limit - reserve. So a 100-unit
// call costs the same time and memory as a 1-unit call, and over any
// trailing window the admitted units never exceed the limit. A fixed-window
// counter admits twice its limit across a boundary, and so does a token
// bucket (GCRA) whose burst equals its limit: only an exact log holds the
// line when eight staggered jobs line their bursts up.
//
// A call is admitted all-or-nothing: only when every pool it draws from has
// room and no pool is blocked. A refused call is charged nothing. Its
// RetryAt is exact: for each pool, the limiter walks the oldest entries,
// summing their units, until enough have left for this cost to fit; the time
// the last of them leaves is when that pool has room, and RetryAt is the
// latest of those and of any block. Oldest + window would be wrong when costs
// differ: a 1-unit oldest entry frees too little for a 100-unit call. A
// charge that can never fit its pool is ErrCostTooLarge, an error at the
// call site, never a refusal that looks transient.
//
// # Clock and ids
//
// There is one clock: Redis TIME read inside the script (or, embedded, the
// wall clock), never behind the last decision, which is kept in a clock
// key. Every admitted call gets an id "<ms>-<seq>" from that clock and a
// global counter, the same id in every pool it draws from; ids increase
// strictly.
//
// # Blocks, failures and the ledger
//
// When the upstream reports its quota spent, Block refuses the pool for
// every worker until the upstream's reset. Each call to the limiter is bound
// by Options.Timeout; when Redis cannot be reached (network, timeout,
// loading, cluster down) a call whose dearest charge is at most
// fail_open_max_cost goes ahead marked Unmetered, and a dearer one fails with
// ErrUnavailable. A call that times out after Redis ran it may be counted
// without being made: the error is on the safe side. The embedded limiter
// never fails open: a database busy past its timeout is an error.
//
// Every admitted call also goes to the SQLite ledger (the caller writes it).
// When Redis loses its data, Refill puts the ledger's metered calls inside
// the window back, keyed on their ids, so refilling twice counts once. The
// Redis limiter notices the loss by itself: the clock key carries an epoch,
// a random name given when the keys are created; a worker that finds an
// epoch it has not seen (Redis restarted empty or was flushed, or the worker
// just started) first refills from its own ledger through Options.Recall,
// then adopts the epoch, then decides.
//
// # Redis keys
//
// All keys of quota key Q share one Redis Cluster hash slot through the tag
// {Q}, are passed to the script in KEYS, and expire when idle (window plus a
// minute):
//
//	ingest:{Q}:clock         "<ms>-<seq>": last decision time and the call counter
//	ingest:{Q}:log:POOL      stream, one entry per call: id <ms>-<seq>, field u = units
//	ingest:{Q}:total:POOL    "<units>:<head>:<touched>": running sum of u over the
//	                         log, ms of its oldest entry, when the log's TTL was set
//	ingest:{Q}:block:POOL    ms until which the pool is blocked
//	ingest:{Q}:lock:NAME     a lease (Lock)
//
// A stream entry takes about 10-20 bytes in its listpack, against about 105
// for a sorted-set member, which is why the log is a stream. window.lua is
// the whole algorithm, run with EVALSHA (reloaded by itself after a restart
// or SCRIPT FLUSH); State runs it read-only with EVALSHA_RO. A decision that
// finds nothing expired is five commands inside the script (TIME, MGET, XADD,
// SET, SET): the head kept beside the total says whether the log needs
// reading at all.
//
// The embedded backend keeps the same log in the quota_log, quota_block and
// quota_clock tables, one BEGIN IMMEDIATE transaction per decision, so
// processes sharing the database file take turns and stay exact.
package quota
