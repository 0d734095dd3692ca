package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/dbcopy"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/metrics"
	"github.com/ingestworks/ingest/ratelimit"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/web"
	"github.com/ingestworks/ingest/wiring"
)

// Key is the API key the simulated daemon sends; the fake accepts any.
const Key = "sim-key"

// Shape is the daemon's configuration, as `ingest run`'s flags give it:
// what the checker takes its every bound from.
type Shape struct {
	Regions    string        // --regions ("" the default regions, "all")
	Categories []string      // --categories, read ("" first: the unfiltered chart)
	Every      time.Duration // --every
	MaxStale   time.Duration // --max-stale
	TrackFor   time.Duration // --track-for (0: no tracking)
	TrackEvery time.Duration // --track-every
	Costs      *ingest.Costs // --costs
	NoPace     bool          // --pace=false: every chart at every slot, the limiter alone holding the pools
	// BackupEvery and BackupKeep are --backup-every and --backup-keep,
	// into backupDir beside the database (0: no backups)
	BackupEvery time.Duration
	BackupKeep  int
	// Redis is --redis / REDIS_URL ("": the embedded limiter), and
	// RedisHook sets that Redis's clock to the bubble's (redis.go).
	Redis     string
	RedisHook redis.Hook
}

// backupDir is where the daemon's scheduled backups go, as --backup-to.
func backupDir(dsn string) string { return filepath.Join(filepath.Dir(dsn), "backups") }

// process is one life of the daemon: built the way `ingest run` builds
// it, on the same database, until its context ends.
type process struct {
	cancel  context.CancelFunc
	done    chan error
	signals chan os.Signal // what the host would deliver: SIGTERM
	running atomic.Bool    // from its start until its stop began
	// db is the daemon's database once its pipeline is open: the disk
	// the nemesis fills is its writer's (full.go)
	db atomic.Pointer[store.DB]
}

// start builds and runs the daemon by the function `ingest run` calls
// (wiring.Host.Run), with only the edges
// swapped: the transport answers in process, the boot clock follows the
// bubble's. The host's clock (time.Now) is the bubble's virtual one.
// With listen, the daemon serves its site there, as --listen does.
func start(dsn string, s Shape, up *Upstream, boot func() (string, time.Duration, bool), log *slog.Logger, listen *pipes) *process {
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{cancel: cancel, done: make(chan error, 1), signals: make(chan os.Signal, 2)}
	var ln *pipeListener
	if listen != nil {
		ln = listen.listen()
	}
	go func() { p.done <- run(ctx, dsn, s, up, boot, log, ln, p.signals, "", p.db.Store) }()
	p.running.Store(true)
	return p
}

// run builds the daemon as start says and runs it until ctx ends or a
// signal on signals stops it. With once, it is `ingest run --once
// --regions once --pace=false` instead: a worker beside the daemon, on
// its database. opened, when set, is given the database once it is open.
func run(ctx context.Context, dsn string, s Shape, up *Upstream, boot func() (string, time.Duration, bool), log *slog.Logger, ln *pipeListener,
	signals <-chan os.Signal, once string, opened func(*store.DB)) error {
	h := &wiring.Host{DSN: dsn, RedisURL: s.Redis, RedisHook: s.RedisHook, Endpoint: "http://fakeyt.sim/", Costs: s.Costs, Logger: log, Clock: clock.System,
		Transport: up, Uptime: boot, Signals: signals, Jitter: up.Jitter}
	standing := ingest.StandardStanding()
	terms := wiring.Terms{Standing: standing, Span: s.Costs.Span(), Clock: clock.System}
	r := wiring.Run{Timetable: jobs.Timetable{Categories: s.Categories, Every: s.Every, MaxStale: s.MaxStale},
		Pace: !s.NoPace, Record: true, Plan: true, Track: s.TrackFor, TrackEvery: s.TrackEvery, Keep: standing.StatsFor,
		Terms: terms, Regions: regions.Selection(s.Regions), Build: metrics.Build{Version: "sim"}}
	if ln != nil {
		r.Listen, r.Plans = &web.Config{Listen: listenAddr}, ratelimit.DefaultAPIPlans()
		r.Listener = h.ServeListener(ctx, ln, *r.Listen, r.Build)
	}
	if s.BackupEvery > 0 {
		r.Backups = &dbcopy.Backups{Dir: backupDir(dsn), Every: s.BackupEvery, Keep: s.BackupKeep}
	}
	if once != "" {
		ctx = context.WithValue(ctx, onceWorker{}, true)
		r.Once, r.Regions, r.Pace, r.Record, r.Plan, r.Track = true, regions.Selection(once), false, false, false, 0
		r.Timetable.Categories, r.Backups = nil, nil
	}
	r.Opened = opened
	return h.Run(ctx, Key, ledger.KeyHash(Key), r)
}

// stop ends the daemon at once, as a kill does between two writes: its
// context is cancelled and it is awaited. A daemon stopped so returns no
// error but the cancellation.
func (p *process) stop() error {
	p.running.Store(false)
	p.cancel()
	err := <-p.done
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// term sends the daemon SIGTERM, as a supervisor stops it, and awaits its
// end, at most within bound: it drains (docs/operations.md, Signals) and
// returns no error. A daemon still running at bound is killed, and that
// is the error.
func (p *process) term(bound time.Duration) error {
	p.running.Store(false)
	p.signals <- syscall.SIGTERM
	select {
	case err := <-p.done:
		return err
	case <-time.After(bound):
	}
	p.cancel()
	<-p.done
	return fmt.Errorf("still running %s after SIGTERM", bound)
}

// beside runs `ingest run --once` for region on the daemon's database
// every every until until, each run awaited: a cron's worker joining the
// daemon's quota key, which the embedded limiter in the one file shares
// (docs/operations.md: run --once beside a daemon is not refused; the
// leases keep them apart), then leaving it. It returns each run: when,
// and how it ended.
func beside(dsn string, s Shape, region string, every time.Duration, until time.Time, up *Upstream,
	boot func() (string, time.Duration, bool), log *slog.Logger) []JoinRun {
	var runs []JoinRun
	for time.Now().Before(until) {
		from := time.Now()
		err := run(context.Background(), dsn, s, up, boot, log, nil, make(chan os.Signal), region, nil)
		runs = append(runs, JoinRun{Interval{from, time.Now()}, err})
		time.Sleep(every)
	}
	return runs
}
