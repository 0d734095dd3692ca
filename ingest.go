// Package ingest keeps a local, searchable copy of what an upstream API
// publishes without spending more of the upstream's daily quota than it may.
//
// This root package holds what every part speaks: the domain types (a video,
// a page of results, a decision of the limiter), the registry of upstream
// operations, the quota costs and the embedded costs.yaml. It imports none of
// the other packages, which are, one line each:
//
//	cmd/ingest/                the command: flags, checks, help, output, exit codes
//	cmd/fakeyt/                the fake upstream as a server, for the demo
//	cmd/yeardb/                builds months of a daemon's work, for benchmarks
//	wiring/                    opens what a command runs on and joins the parts
//	custody/                   which limiter holds a database's window, its moves, peers and copies
//	clock/                     the house's one clock, handed to every part that reads the time
//	regions/                   what a region is: the catalogue, the defaults, tiers and depth
//	jobs/                      the schedule, the jobs, the runner and the daemon
//	pace/                      pacing: when each chart runs, within the quota
//	quota/                     the upstream's limiter, on Redis or embedded
//	costs/                     the costs file's loader and checker
//	fetch/                     the YouTube Data API v3 client
//	store/                     the database (SQLite or PostgreSQL), its migrations
//	dbcopy/                    one database carried into another: db copy
//	retention/                 what the database may no longer keep, deleted: prune, the terms' cuts
//	ledger/                    the quota's book in it, and the embedded limiter's tables
//	clients/                   the API's clients in it: tokens, and counts on PostgreSQL
//	export/                    the export's file formats
//	report/                    what report, /quota and the dashboard show
//	metrics/                   the Prometheus series of run --listen
//	web/                       the JSON API and the pages
//	web/listener/              what every listener shares: the port, the server, /readyz and /healthz
//	web/throttle/              what a request may cost: the API metered by plan, wrong tokens slowed, builds budgeted
//	web/kept/                  what the kept answers may hold, and which go first
//	web/signin/                the access token's strength and the sessions a sign-in starts
//	web/edge/                  what the caches in front are told: how long, by which keys, what varies an answer
//	web/transport/             how any answer leaves: held, tagged, 304, gzip; the static files
//	web/landing/               the caches in front told of each landing, a watcher per cache
//	proxy/                     the YouTube Data API forwarded to its clients, metered: ingest proxy
//	publish/                   the readers' site written as files a static host serves
//	ratelimit/                 the API clients' request limiter
//	purge/                     the caches in front told what a landing changed
//	util/sdnotify/         systemd told the daemon is ready (sd_notify)
//	util/envflag/          each flag tied to its one environment variable
//	util/termbar/          a progress bar, only when a person watches
//	util/termtext/         text laid out for a terminal
//	util/buildinfo/        what a binary was built from
//	internal/rig/              what only the tests, the labs and the lint run; never in the binary
//	internal/rig/fakeyt/       the fake YouTube Data API of tests and the demo
//	internal/rig/yeardb/       the builder behind cmd/yeardb
//	internal/rig/hostclock/    the lint that keeps the host's clock inside package clock
//	internal/rig/pgtest/       a real PostgreSQL for tests
//	internal/rig/storetest/    a test run on each database the store opens
//	internal/rig/passtest/     a test store filled by real passes, as run --once fills it
//	internal/rig/seedtest/     the seeds a test draws from: fixed in make test, random in make sim
//	internal/rig/clocktest/    the clock a test sets and moves
//	internal/rig/redistest/    real redis-server processes for tests
//	internal/rig/browsertest/  a real headless Chromium for tests
//	internal/rig/npmtest/      a package from npm for the tests that drive JavaScript
//	internal/rig/partition/    real daemons on network namespaces under a nemesis (make partition)
//	internal/rig/sim/          the whole daemon on virtual time under a nemesis (make sim)
//	internal/rig/mutate/       the mutants make sim-mutants draws from operators, over what the simulation runs
//	scripts/                   make's helper scripts; testcounts.go counts the suite's checks
//
// Data travels one way: schedule -> job -> limiter -> upstream -> store.
//
// What is where: what every part speaks: Video, Page, Decision, Call (built
// from a decision and its Caller, the run and region the limiter is given
// with each call, in one place: Decision.Call), Unknown (a decision of
// unknown outcome, as the Redis limiter leaves it and the ledger keeps it),
// ChartName, RunStatus/RunEnd, the costs model (Costs, Pool, DefaultPool,
// BlockedPools, and the built-in costs.yaml as CostsYAML; Delivery, the
// bound on how late after its admission the upstream can receive a call,
// which the client keeps and the limiters hold each call for beyond its
// window), the registry of upstream operations (ops.go: each one's name,
// path, cost and what it fetches, defined once), log attribute keys
// (logkeys.go), the Clock every part that reads the time is handed (package
// clock builds it) and the house's waits (wait.go), among them a wait on a
// server bounded by its silence (silence.go); and what every part that
// dials a server or prints a setting says of it: which server answered at
// an address (protocol.go), and a URL that may hold a password checked and
// printed the one way (redact.go). The adapters import these from here,
// never a helper beside them, so that an adapter stands on the root and
// its own technology alone.
package ingest

import (
	"context"
	"fmt"
	"time"
)

// Video is the latest metadata of one video, as the upstream describes it.
type Video struct {
	ID           string
	Title        string
	Description  string
	Tags         []string
	ChannelID    string
	ChannelTitle string
	CategoryID   string
	PublishedAt  time.Time
	Duration     string // ISO 8601, as the upstream sends it (PT4M13S)
	// Thumbnail is the URL of the default (120x90) thumbnail, "" if none.
	Thumbnail string
	// AudioLanguage and Language are the owner's BCP-47 tags for the
	// spoken language (snippet.defaultAudioLanguage) and the title's and
	// description's (snippet.defaultLanguage), as the upstream sends them:
	// "" when it sends none, which is common; "zxx" for no linguistic
	// content; regional tags ("en-US") as well as bare ones.
	AudioLanguage string
	Language      string
	// ViewCount is nil when the upstream sent no statistics (or no
	// viewCount); LikeCount and CommentCount are nil when the owner hides
	// them: absent is not zero.
	ViewCount    *int64
	LikeCount    *int64
	CommentCount *int64
}

// PageKind says where a page came from.
type PageKind string

const (
	// Trending pages come from videos.list chart=mostPopular.
	Trending PageKind = "trending"
	// Search pages come from search.list, detailed by videos.list id=...
	Search PageKind = "search"
)

// Page is one page of results, the unit that is stored in one transaction.
type Page struct {
	Kind      PageKind
	Region    string
	Number    int     // 1-based within its pass
	Videos    []Video // in rank order
	NextToken string  // empty on the last page
	Fetched   time.Time
}

// Category is a video category as videoCategories.list names it for a region.
type Category struct {
	Region string
	ID     string
	Title  string
	// Language is the hl the title was asked in; "" the upstream's
	// default, English.
	Language string
}

// Region is a region the upstream charts, as i18nRegions.list names it:
// its ISO 3166-1 alpha-2 code and its name.
type Region struct {
	Code string
	Name string
}

// RunStatus is how a run stands or ended, as stored and as `ingest report`
// prints it.
type RunStatus string

// The run statuses.
const (
	StatusRunning   RunStatus = "running"
	StatusCompleted RunStatus = "completed"
	// StatusStopped: the quota said no (or a backfill's --max-units).
	StatusStopped RunStatus = "stopped"
	// StatusInterrupted: a signal stopped the run between pages.
	StatusInterrupted RunStatus = "interrupted"
	// StatusSkipped: the upstream has no such chart for the region.
	StatusSkipped RunStatus = "skipped"
	StatusFailed  RunStatus = "failed"
	// StatusNever: a region with no run yet (reports only).
	StatusNever RunStatus = "never"
)

// Ended lists the statuses a finished run can have, in the order reports
// count them.
var Ended = []RunStatus{StatusCompleted, StatusStopped, StatusInterrupted, StatusSkipped, StatusFailed}

// RunEnd is how a run ended, as the store records it.
type RunEnd struct {
	Status  RunStatus // one of Ended
	Message string
	At      time.Time
	// RetryAt is, for a stopped run, when the quota has room again.
	RetryAt time.Time
}

// Charge is what one admitted call took from one pool.
type Charge struct {
	Pool  string
	Units int64
}

// PoolState is one pool as a decision or a report sees it.
type PoolState struct {
	Pool    string
	Limit   int64
	Reserve int64
	Used    int64 // units admitted in the trailing window
	// UsedDay is what was admitted in the current calendar day of the
	// pool's zone (zero for a pool without a day).
	UsedDay   int64
	Day       string // the pool's day zone, "" for none
	Remaining int64  // what fits now: Limit - Reserve - the larger of Used and UsedDay, never below zero
	// FreeAt is when enough units will have left the window for the cost
	// asked about; zero when there is room now.
	FreeAt time.Time
	// BlockedUntil is set while the upstream says this pool is spent.
	BlockedUntil time.Time
	// WaitUntil is set while the limiter, having lost data, waits for the
	// ledgers of the workers that spent: until then it admits nothing
	// metered, and at the latest it ends then.
	WaitUntil time.Time
	// Others is how many workers besides the limiter's own (ledgers of
	// other databases) spent in the pool's window, as State reads it:
	// every process on one database is one worker, so the embedded
	// limiter, which lives in one database, counts none.
	Others int
}

// Block is a pool the upstream reported spent, as the ledger keeps it so
// that a limiter that lost its data gets the block back.
type Block struct {
	QuotaKey string
	Pool     string
	Until    time.Time // the upstream's reset, from the limiter's clock
	At       time.Time
	Op       string // the call that met the exhausted quota
}

// Recalled is what a worker's ledger holds of the trailing window: its
// admitted calls and the blocks it met.
type Recalled struct {
	Calls  []Call
	Blocks []Block
}

// Decision is the limiter's answer to one call. A refusal is a decision with
// Allowed false, not an error.
type Decision struct {
	Allowed bool
	// ID names an admitted call; the ledger keys on it so that refilling a
	// limiter from the ledger never counts a call twice.
	ID string
	// At is the limiter's clock when it decided.
	At      time.Time
	Op      string
	Charges []Charge // what an admitted call took, by pool
	// Unmetered marks a cheap call admitted while the limiter was
	// unreachable (fail open): it is in the ledger, not in the window.
	Unmetered bool
	// Pools is the state of every pool the operation draws from, after the
	// decision.
	Pools []PoolState
	// RetryAt is, for a refusal, the earliest time at which every pool has
	// room for this cost (or the end of a block).
	RetryAt time.Time
}

// Units returns what the decision charged to pool, zero if nothing.
func (d Decision) Units(pool string) int64 {
	for _, c := range d.Charges {
		if c.Pool == pool {
			return c.Units
		}
	}
	return 0
}

// Call is one admitted call as the ledger keeps it.
type Call struct {
	QuotaKey  string
	ID        string
	At        time.Time
	Op        string
	Region    string
	RunID     int64  // zero outside a run
	Client    string // the proxy's client, "" for the daemon's own calls
	Charges   []Charge
	Unmetered bool
}

// Stopped is a chart's pass the quota stopped, as the runs keep it: what
// it set out to read and did not, whose chart asks again at its next run.
type Stopped struct {
	RunID   int64
	Chart   string // ChartName of its region and category
	Region  string
	Started time.Time
}

// Unknown is a decision whose outcome is unknown, as the ledger keeps it
// until it is resolved: the request went to the shared limiter and no
// answer came in time. The call was refused and never made; the limiter
// may still have admitted it, or may yet when a hung server resumes.
type Unknown struct {
	QuotaKey string
	Instance string // the limiter instance that sent it: its receipts
	Token    int64  // the instance's number for the request
	Op       string
	At       time.Time // this worker's clock when it gave up
	Charges  []Charge
}

// RefusedError ends a job when the limiter says no. It carries the decision,
// with the time at which the job could go on.
type RefusedError struct{ Decision Decision }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("quota: %s refused until %s", e.Decision.Op,
		e.Decision.RetryAt.UTC().Format(time.RFC3339))
}

// Gate is called before every upstream attempt, retries included, with the
// operation about to be sent. It takes the quota and writes the ledger; it
// returns a *RefusedError when the limiter says no, and the attempt is not
// made. Otherwise it returns giveBack, never nil, for the caller to call
// when the attempt provably never reached the upstream (the connection was
// refused, the name did not resolve): the upstream charged nothing, so the
// units go back to the limiter and the ledger marks the call given back.
type Gate func(ctx context.Context, op string) (giveBack func(context.Context) error, err error)

// NoGiveBack is the giveBack of a gate that took nothing.
func NoGiveBack(context.Context) error { return nil }
