// Package quota is the limiter that keeps every worker inside one upstream
// quota. It has two backends with one contract: Redis, shared by every
// process and host that points at it, and an embedded one in the SQLite
// database, for a single host. A conformance suite runs against both.
//
// # The model
//
// A quota key names one upstream quota (a Google Cloud project). Inside it,
// pools are budgets: limit units, less a reserve left for people, over a
// trailing sliding window and, when the pool names a day zone, over each
// calendar day of that zone too. costs.yaml lists the pools and what each
// operation charges in each: since June 2026 the YouTube Data API has three
// buckets (10,000 units a day for most methods, 100 search.list calls, and
// 10,000 for videos.batchGetStats), each a pool, each with the upstream's
// day, midnight to midnight in Los Angeles.
//
// Why both a window and a day: the window is the smooth guard, but the
// upstream counts calendar days, which last 23 or 25 hours when the clocks
// change. A 24-hour window alone admits up to twice the limit inside the
// 25-hour day of November, and refuses calls the upstream would take just
// after its reset. A call is admitted only when every pool it draws from has
// room in both, and no pool is blocked or waiting: all or nothing. A refused
// call is charged nothing, and its RetryAt is the earliest time at which all
// of that holds.
//
// # The log and its account
//
// Each pool is a log with one entry per admitted call, not per unit, so a
// 100-unit call costs what a 1-unit call costs. Beside the log an account
// keeps cumulative counts: cum, every unit ever appended; wbase, the units
// of entries that have left the window; dbase, the units before the current
// day. Used in the window is cum - wbase, used today cum - dbase, and a
// decision reads the log only to move those bases past entries that just
// left. An entry leaves the log once it is out of both the window and the
// day.
//
// The retry time of a full window is when the entry whose cumulative count
// reaches cum + cost - capacity leaves it: walking the oldest entries, not
// oldest + window, which is wrong when costs differ. Because an entry's
// cumulative count never changes, the answer for one target never changes
// either: the last one is kept in the account. The refusals that pile up on
// a saturated pool do less still: the script remembers its last one-pool
// refusal for the state it was made on, and answers the same question
// asked of the same state from memory until the first entry in the window
// leaves it (or the day, a block or a wait ends), when the answer could
// change. Only refusals are remembered, so a memory kept too long could
// refuse a call, never admit one; a log lost meanwhile is noticed when the
// memory runs out, or at the first call that asks something else. A full
// day frees at the next day start. A charge that can never fit is
// ErrCostTooLarge at the call site, never a refusal that looks transient.
//
// Most decisions are one-pool admissions with room to spare, when nothing
// leaves the window and no renewal or day's end is due. The admission that
// writes the state keeps a hot record of it: where the pool's counters sit
// in the string, and until when nothing can come due (the next renewal,
// the day's end, the first entry in the window leaving it). The next such
// admission on that same state string appends its entry and writes the new
// state from the record, without parsing the state: the same string the
// full path would write, as TestRedisHotAdmissionsWriteWhatTheFullPathWould
// checks call by call. Any other decision, and any call on a string the
// script did not write itself, takes the full path.
//
// # One clock
//
// The Redis limiter decides by the server's TIME, read inside the script
// and never behind the last decision. Day starts come from the zone
// database, which Lua does not have: the caller sends the starts of four
// days around its own clock, and the script picks the one that holds its
// own now, so a worker whose clock is minutes off still gets the limiter's
// day and the limiter's block ends. A TIME more than Options.Guard ahead of
// the last decision that the caller's clock does not confirm is taken as an
// odd reading: the decision is made at the last good time, and the log is
// not thrown away.
//
// # Outages and answers
//
// Every call to Redis is bound by Options.Timeout, down to the socket
// (NewClient). A request that surely never reached Redis (the connection
// was refused) is an outage: the call goes ahead unmetered only when every
// pool it draws from has a fail_open policy that allows it, by cost and by
// this process's budget for the outage, and is written into the window,
// through the ledger, once Redis answers again. An error reply (out of
// memory, a read-only replica, a script error) is Redis answering: the call
// is refused. A request that went out without an answer in time has an
// unknown outcome: it is refused, never admitted unmetered.
//
// # Losing data
//
// Every admitted call and every block also goes to the worker's SQLite
// ledger. Redis can lose data in ways a missing key does not show: a restart
// from an older snapshot brings the keys back as they were. So every worker
// remembers the highest call counter it has seen (and its ledger's), and a
// counter that went back, a state key missing while the worker knows of
// calls in the window, or a pool's log without its account (or an
// account that counts entries its log no longer has) is a loss; but a log
// gone after its pool was idle for longer than its expiry (a day and a
// minute at least: calls of other pools keep the state alive) only held
// entries out of the window and the day, and its account is emptied.
//
// The worker that finds a loss starts a recovery: a new generation of the
// keys (so every worker notices), and every pool waits,
// admitting nothing metered, until every worker that spent in the window
// has refilled its ledger (refilling is idempotent, keyed on call ids), or
// the window and the current day have passed, or an operator runs `ingest
// quota restore`. Who spent comes from the register: workers register when
// they spend, and daemons copy the register every Options.Beat; a copy
// vouches for the others only while it is seconds old (Options.Fresh),
// because after a loss the register itself may be stale. The wait's end is
// in the state and in the recovery's record, so that neither key lost
// alone ends it.
//
// # One configuration
//
// The limiter keeps each pool's limit, reserve, window and day. A worker
// whose costs file disagrees gets a *ConfigError before it spends (two
// windows would trim each other's entries and admit twice the limit);
// ApplyConfig replaces the settings on purpose.
//
// # Redis keys
//
// All keys of quota key Q share one Redis Cluster hash slot through the tag
// {Q}, are passed to the script in KEYS, and expire when idle:
//
//	ingest:{Q}:state         "<ms>-<seq>:<epoch>:<wait>": last decision, call counter,
//	                         generation, a recovery's wait; then per pool its
//	                         account (cum, wbase, window edge, dbase, day start,
//	                         oldest entry, TTL refresh time, last retry computed),
//	                         block end, wait end and settings "limit:reserve:window_ms:day"
//	ingest:{Q}:reg           hash worker -> ms: the register of workers that spent
//	ingest:{Q}:recover       hash: a recovery's start, the workers it needs, those done
//	ingest:{Q}:log:POOL      stream, one entry per call: id <ms>-<seq>, field u = units
//	ingest:{Q}:rcpt:INST     one limiter instance's receipts: a ring of "token id"
//	ingest:{Q}:fence:INST    the tokens that instance gave up on, reconciled
//	ingest:{Q}:lock:NAME     a lease (Lock)
//
// Everything a decision reads but the log is in the one state key, so that
// a decision is one FCALL that reads two keys (the state and the fence),
// appends to a log, and writes the state and a receipt; the state's and
// the logs' expiries are renewed every half minute, not at every call.
//
// A stream entry takes about 10-20 bytes in its listpack, against about 105
// for a sorted-set member, which is why the log is a stream. window.lua is
// the whole algorithm, loaded once as a Redis Function and run with FCALL
// (loaded again by itself after a restart or FUNCTION FLUSH; EVALSHA where
// functions are refused); State runs it read-only with EVALSHA_RO.
//
// The embedded backend keeps the same log in the quota_log, quota_block,
// quota_clock and quota_config tables, one BEGIN IMMEDIATE transaction per
// decision, so processes sharing the database file take turns and stay
// exact. It never fails open, and loses its log only with its ledger.
package quota
