package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/custody"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/wiring"
)

// Leave is the move of the daemon's database off Redis that ends a
// history (LeaveRedis): the first call of a host new to the key (Peer, its
// ledger id), admitted at PeerCall, and the daemon's stop at that very
// instant; then `quota seed` back to the embedded limiter with the Redis
// gone, first with the daemon's ledger alone (Alone, the error it ended
// with), then with every host's (Both); the embedded limiter's counts
// after it (Look); and the host's first run off Redis (Start).
type Leave struct {
	PeerCall, Stopped time.Time
	Peer              string // the new host's ledger id
	Alone, Both       error
	// Start is how the host's first run off Redis after the move ended
	// (`run --once` of the last host's chart, on the embedded limiter).
	Start error
	Look  Look
}

// stopAtSpend is the clock's hook for the last host's run: the first
// decision Redis admits through it stops the daemon before the run goes on.
type stopAtSpend struct {
	*RedisClock
	stop  func()
	taken atomic.Bool
	at    time.Time
}

func (s *stopAtSpend) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	hook := s.RedisClock.ProcessHook(next)
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := hook(ctx, cmd)
		s.take(err, cmd)
		return err
	}
}

func (s *stopAtSpend) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	hook := s.RedisClock.ProcessPipelineHook(next)
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := hook(ctx, cmds)
		s.take(err, cmds...)
		return err
	}
}

func (s *stopAtSpend) take(err error, cmds ...redis.Cmder) {
	if err == nil && decides(cmds) && s.taken.CompareAndSwap(false, true) {
		s.at = time.Now()
		s.stop()
	}
}

// lastDSN is the database of the host that spends last (leaveRedis).
func lastDSN(dir string) string { return filepath.Join(dir, "last.db") }

// leaveRedis ends a history on Redis by the move off it that knows the
// least: a host of another database spends its first call on the key
// (`run --once` of the peer's chart), the daemon p stops at that instant,
// before a heartbeat of its own could copy the limiter's list of ledgers
// (its end copies it, as a run's end does), and its Redis cannot be asked
// at the seed back (--leaving-redis-gone). The seed with the daemon's
// ledger alone must be refused, naming that host; with every host's
// ledger it moves, and the embedded limiter counts the window's calls
// once each.
func (h *History) leaveRedis(p *process, dsn string, up *Upstream, boot func() (string, time.Duration, bool), logw io.Writer, log *slog.Logger) (Leave, error) {
	s := h.Shape
	var stopErr error
	hook := &stopAtSpend{stop: func() { stopErr = p.stop() }}
	hook.RedisClock, _ = s.RedisHook.(*RedisClock)
	s.RedisHook = hook
	j := Join{Interval: Interval{From: time.Now()}, Region: h.Peers[len(h.Peers)-1].Region}
	err := run(context.Background(), lastDSN(h.Dir), s, up, boot, slog.New(slog.NewTextHandler(logw, nil)), nil, make(chan os.Signal), j.Region, nil)
	j.To = time.Now()
	j.Runs = []JoinRun{{j.Interval, err}}
	h.Joins, h.Peers = append(h.Joins, j), append(h.Peers, j)
	if !hook.taken.Load() {
		p.stop()
		return Leave{}, fmt.Errorf("the last host's run made no decision on Redis (a limiter that waits, or refuses): %v", err)
	}
	if stopErr != nil {
		return Leave{}, fmt.Errorf("the daemon at the last host's call: %w", stopErr)
	}
	lv := Leave{PeerCall: hook.at, Stopped: hook.at}
	if lv.Peer, err = ledgerID(lastDSN(h.Dir)); err != nil {
		return lv, err
	}
	off := &wiring.Host{DSN: dsn, Costs: s.Costs, Logger: log, Clock: clock.System, Uptime: boot}
	gone := custody.Leaving{Gone: true}
	lv.Alone = backToEmbedded(off, []string{dsn}, gone, nil)
	lv.Both = backToEmbedded(off, []string{dsn, peerDSN(h.Dir), lastDSN(h.Dir)}, gone, &lv.Look)
	if lv.Both == nil {
		s.Redis, s.RedisHook = "", nil
		lv.Start = run(context.Background(), dsn, s, up, boot, log, nil, make(chan os.Signal), j.Region, nil)
	}
	return lv, nil
}

// backToEmbedded is `ingest quota seed --leaving-redis-gone` with a --ledger
// for each of paths, by the function that command calls; look, when set,
// is then the embedded limiter's count of each pool, as `quota show` reads
// it.
func backToEmbedded(h *wiring.Host, paths []string, lv custody.Leaving, look *Look) error {
	ctx := context.Background()
	db, err := h.OpenForLimiter(ctx, true)
	if err != nil {
		return err
	}
	defer db.Close()
	key := ledger.KeyHash(Key)
	l, closeLimiter, err := h.OpenLimiter(db, key)
	if err != nil {
		return err
	}
	defer closeLimiter()
	if _, _, err := h.Seed(ctx, l, key, paths, lv); err != nil || look == nil {
		return err
	}
	states, err := l.State(ctx)
	if err != nil {
		return fmt.Errorf("the embedded limiter's state: %w", err)
	}
	*look = Look{At: time.Now(), Used: map[string]int64{}}
	for _, st := range states {
		look.Used[st.Pool] = st.Used
	}
	return nil
}

// ledgerID is the ledger id of the database at dsn.
func ledgerID(dsn string) (string, error) {
	ctx := context.Background()
	db, err := wiring.OpenExisting(ctx, dsn)
	if err != nil {
		return "", err
	}
	defer db.Close()
	return db.LedgerID(ctx)
}

// namesPeer reports whether err is the refusal of a move off Redis that
// names the ledger peer as left behind.
func namesPeer(err error, peer string) bool {
	var pl *custody.PeersLeftError
	if !errors.As(err, &pl) {
		return false
	}
	for _, p := range pl.Peers {
		if p.Ledger == peer {
			return true
		}
	}
	return false
}
