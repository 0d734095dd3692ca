// Package quota is the limiter that keeps every worker inside one upstream
// quota: an exact, weighted sliding window per pool, and each pool's
// calendar day, shared by every process that uses one backend. Redis
// (window.lua) serves every host that points at it; the embedded limiter
// lives in the store's database, SQLite's for one host and PostgreSQL's
// for every host sharing it. One conformance suite holds them to one
// contract.
//
// Each constructor takes what the promises need as required arguments
// (ledger.go); Options are tunables. The model, the promises and what each
// argument keeps are in docs/explanation/quota.md, with the log's arithmetic, the
// Redis keys and the embedded tables under "Inside the limiter".
//
// What is where: the limiter's algorithm: Redis (window.lua, fence.lua) and
// the embedded backends (SQLite, PostgreSQL) over the ledger's tables
// (quota.Tables, small roles; the SQL is package ledger's), the
// constructors' required arguments (ledger.go), the roles callers use
// (Meter, Reporter, Operator, Locker), the Redis client with the limiter's
// timeouts (client.go), one conformance suite.
package quota
