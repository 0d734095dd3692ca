// Package quota is the limiter that keeps every worker inside one upstream
// quota. It has backends with one contract: Redis, shared by every
// process and host that points at it, and an embedded one in the store's
// database: SQLite's for a single host, PostgreSQL's for every host that
// shares the database. A conformance suite runs against each.
//
// # The model
//
// A quota key names one upstream quota (a Google Cloud project). Inside it,
// pools are budgets: limit units, less a reserve left for people, over a
// trailing sliding window and, when the pool names a day zone, over each
// calendar day of that zone too (the upstream's day lasts 23 or 25 hours
// when the clocks change; a 24-hour window alone would admit twice the
// limit in November's long day). A call is admitted only when every pool it
// draws from has room in both, and none is blocked or waiting: all or
// nothing. A refused call is charged nothing; its RetryAt is the earliest
// time at which all of that holds. A charge that can never fit is
// ErrCostTooLarge at the call site.
//
// # The log (promises 1 to 3)
//
// Each pool is a log with one entry per admitted call, not per unit. An
// entry carries its units and the pool's running sum up to it, so the
// units in the window are the newest sum less the sum at the window's edge,
// and the day's the newest sum less the sum before the day began: two
// look-ups, whatever the log's length or the charge. A full pool's retry
// time is when the entry whose running sum reaches sum + cost - capacity
// leaves the window (oldest + window is wrong when costs differ); it is
// looked for among the window's first entries in one read, then by halving
// the time after them, so a refusal costs about what an admission does,
// whatever the log's length. Entries out of both the window and the day
// are trimmed.
//
// # One clock (promise 4)
//
// The Redis limiter decides by the server's TIME, read inside the script,
// never behind the last decision nor behind the newest entry: a call
// stamped ahead stays in the window a whole window after its stamp, so a
// clock stepped back admits nothing extra. A TIME more than Options.Guard
// ahead of the last decision that the worker's boot clock does not confirm
// (the host's wall clock stepped, and a worker on the same host with it) is
// replaced by the time the boot clock gives. Calls decided while the clock
// read behind the last decision count as decided when it is next seen
// right (the hold, hold.go), so they stay a whole window of real time. The
// upstream's Date header is a third clock (upstream.go): a decision whose
// time disagrees with it by more than Options.Guard is not taken, on a new
// boot too, which asks the upstream's time first. Day starts come from the zone
// database, which Lua lacks: the worker sends four day starts around its
// own clock and the script picks the one that holds its own now.
//
// # The ledger is the worker (promises 8 and 9)
//
// Every admitted call and every block is also written to the worker's
// ledger, its SQLite database. To the limiter, a worker is a ledger (the
// database's stable id), not a process: every process writing to one
// database is one worker, and a cron job's next run is the same worker.
// Redis keeps each ledger's high-water mark, its last admitted call. Each
// decision carries the ledger's own mark; a Redis that shows an older one,
// a log that does not end where the state says, or a state older than a
// mark it has seen, has lost data (a restart, FLUSHALL, a failover to a
// replica or a snapshot that is behind, keys restored in place, eviction),
// and the first call of any ledger whose calls are missing finds it,
// whatever other ledgers did since. A Redis with no configuration for the
// quota key is lost data when the ledger holds calls in the pools' span,
// and otherwise a key nobody created (ErrNotApplied: `ingest quota apply
// --new`). Create, the apply, asks for that intent on a key with no
// configuration, and refuses when the limiter or a ledger shows the key
// was used (apply.go): a new configuration would erase the loss.
//
// The ledger that finds a loss starts a recovery (recovery.go): every pool
// waits, admitting nothing metered, until every ledger that spent within
// the span has put its calls back (refilling is idempotent, keyed on call
// ids) and a quiet period has passed, or the window and the current day
// have passed, or an operator runs `ingest quota restore`. Who spent comes
// from this ledger's copy of the limiter's list of ledgers, kept in its
// database (Options.Notes) and refreshed every Options.Beat; a copy older
// than the span cannot tell, and the wait then ends with time. A ledger
// that began spending after the finder's last copy is named by nobody: the
// quiet period lasts, from the recovery's start, the longest cadence the
// refilling ledgers report (the longest gap between a ledger's calls, the
// time since its last, or two Beats for a process that heartbeats), so
// that such a ledger contacts the limiter, finds its own calls missing and
// joins the recovery before it ends. Calls of a ledger that has not called
// since a rollback cannot be seen until it does: the pool's reserve is the
// headroom for them.
//
// Corrupt state is a loss, never a gift: a log entry whose units or running
// sum are not whole and positive, sums that go down, a state field that is
// not a number or an id, recovery lists or a ledger's entry that are not
// JSON, a state clock ahead of every entry and every ledger mark by more
// than the guard. The script answers "lost" and admits nothing; the
// recovery drops what cannot be read and the ledgers put it back.
//
// # Outages (promise 5)
//
// Every call to Redis is bound by Options.Timeout, down to the socket
// (NewClient). A refused connection and a hung server are both outages: a
// call goes ahead unmetered only when every pool it draws from has a
// fail_open policy that allows its cost, and the units this ledger took
// unmetered in the pool over its window, counted from the ledger, stay
// within the budget (failopen.go). Unmetered calls are written into the
// window once Redis answers. A request that went out without an answer may
// still be decided by Redis later: it is kept as a decision of unknown
// outcome, fenced by its token and given back when Redis answers
// (unknown.go). An error reply (out of memory, a read-only replica) is
// Redis answering: the call is refused. With Options.Replicas, an admission
// counts only once WAIT confirms that many replicas hold it.
//
// # One configuration (promise 10)
//
// The limiter keeps each pool's limit, reserve, window and day, written by
// ApplyConfig on purpose. A worker whose costs file disagrees gets a
// *ConfigError before it spends.
//
// # Redis keys (promise 6)
//
// All keys of quota key Q share one cluster slot through the tag {Q}, are
// passed to the script in KEYS, and all but the configuration expire when
// idle:
//
//	ingest:{Q}:conf        hash pool -> "limit:reserve:window_ms:day"
//	ingest:{Q}:state       hash: clock, seq, last (the last decision's time,
//	                       counter and admitted id); hold_from, hold_till (the
//	                       hold); per pool POOL.last (the id its log ends with),
//	                       POOL.block, POOL.wait, POOL.until (the wait's end by
//	                       time alone); during a recovery need, done, since
//	                       (its start) and every (the longest cadence reported)
//	ingest:{Q}:ledgers     hash ledger -> {"mark", "at", "where"}
//	ingest:{Q}:log:POOL    stream: id "<ms>-<seq>", u units, c running sum
//	ingest:{Q}:rcpt:INST   hash token%32 -> "token id": an instance's recent admissions
//	ingest:{Q}:fence:INST  set: the tokens an instance gave up on
//	ingest:{Q}:lock:NAME   a lease (Lock)
//
// window.lua is the whole algorithm, one mode per operation, its arguments
// and its reply one JSON object each; fence.lua settles the decisions of
// unknown outcome. They run through EVALSHA (EVAL when the server has lost
// them), which every Redis since 5, Valkey and the
// managed services offer; reads run as EVALSHA_RO.
//
// The embedded backend keeps the same log in the quota_log, quota_block,
// quota_clock and quota_config tables, one transaction per decision in
// which it is alone on its quota key (SQLite's BEGIN IMMEDIATE, a
// PostgreSQL advisory lock), so processes sharing the database take turns
// and stay exact. On PostgreSQL it decides by the server's clock, which
// every host shares, as Redis's TIME is. It never fails open, and loses its
// log only with its ledger.
package quota
