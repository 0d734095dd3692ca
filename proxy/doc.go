// Package proxy is `ingest proxy`: the YouTube Data API v3 under
// /youtube/v3/, forwarded to the configured upstream with the operator's
// key, each call metered by costs.yaml through the same limiter and ledger
// as the daemon's, for a client known by its token.
//
// # Who calls
//
// A client is a token of `ingest tokens add` (only its hash is kept), sent
// where the official clients send an API key: the key= query parameter, or
// the X-Goog-Api-Key header. The token is never forwarded: the upstream
// gets the operator's key (YOUTUBE_API_KEY), which no client sees. A call
// without a token is refused as the upstream refuses a call without a key
// (403 forbidden), one with an unknown or revoked token as it refuses a bad
// key (400 keyInvalid).
//
// # What is forwarded
//
// Only the operations of the registry (ingest.Operations), each at its
// path, by GET: what costs.yaml prices. Anything else is refused and never
// sent, so that no call leaves unmetered, and only the configured upstream
// is ever reached: the proxy builds each request from the operation's path
// and the client's query, never from a URL the client names. The client's
// headers are not forwarded (neither its hops', its cookies nor its
// address); the answer keeps only what describes its body. Answers are
// bounded in size, and the key is taken out of anything the upstream
// echoes.
//
// # Metered before it is sent
//
// Each call passes the limiter first (jobs.ClientGate), as a daemon's
// does: admitted, it is in the ledger with its client before it is sent;
// refused, it is never sent and never charged. A call that provably never
// reached the upstream is given back; one the upstream answered, an error
// included, stays charged, as the upstream charges it. A call the
// upstream refuses for its spent quota blocks the pools for every worker,
// the daemon included, until the upstream's reset (jobs.BlockSpent). The
// client's own library retries; each retry is a call of its own.
//
// A client's plan (ratelimit.ProxyPlan) bounds it before the limiter is
// asked: the operations it may call, its daily share of each pool, what
// the daemon's published plan keeps for its tier-1 charts, and, by its
// priority, the daily shares of the plans before it. The share is counted
// again once the limiter has written the call to the ledger, and the call
// given back unsent if it is past: so it holds across proxy processes on
// one database, which no lock in one process could promise.
//
// # Refusals the official clients read
//
// A refusal is answered in the upstream's own error shape
// ({"error":{"code","message","errors":[{"message","domain","reason"}]}}):
// 403 quotaExceeded (domain youtube.quota) while a pool is spent until the
// upstream's reset or blocked, 429 rateLimitExceeded when it frees sooner,
// with Retry-After and the RateLimit fields the read API sends
// (throttle.SetPolicy, SetRemaining). The message names the budget and
// when it frees. So Go's client returns a *googleapi.Error, Python's
// raises HttpError and Node's a GaxiosError, each with that status and
// reason.
//
// # Discovery
//
// Python's client builds its service from the API's discovery document;
// the proxy serves it at /discovery/v1/apis/youtube/v3/rest, read once
// from the upstream without the key (the upstream meters it against no
// quota), with the proxy's own address as its rootUrl, so that the
// library's calls come to the proxy.
package proxy
