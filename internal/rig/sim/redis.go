package sim

// A real redis-server whose clock is the bubble's: the Redis limiter
// decides by Redis's own TIME and expires its keys by it (docs/contract.md),
// so a Redis on the wall clock would see a simulated day pass in seconds.
// libfaketime cannot serve here: Debian's redis-server allocates with
// jemalloc, which reads the clock while libfaketime is still starting, and
// the server never starts. A shim of three functions, compiled by the
// system's cc and preloaded into the server, answers the wall clock from
// a file the rig maps too: before each command a client of the simulation
// sends, the rig stores the bubble's time there. Virtual time does not run
// while a goroutine waits on a socket (it is not durably blocked), so the
// time Redis reads is the time the command was sent at. Every other clock
// (the monotonic one the server's timers run on) stays the kernel's.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/quota"
	"github.com/ingestworks/ingest/wiring"
)

// clockShim is the preloaded library's source: the wall clock read from
// VCLOCK_FILE's eight bytes (Unix nanoseconds; zero: the kernel's), every
// other clock passed to the kernel by system call, as a lookup of the
// next symbol would allocate and so start jemalloc on the clock.
const clockShim = `#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *virt;

__attribute__((constructor)) static void vclock_open(void) {
	const char *path = getenv("VCLOCK_FILE");
	if (!path) return;
	int fd = open(path, O_RDONLY);
	if (fd < 0) return;
	void *p = mmap(NULL, 8, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED) virt = p;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	int64_t ns = virt ? __atomic_load_n(virt, __ATOMIC_SEQ_CST) : 0;
	if (ns > 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		ts->tv_sec = ns / 1000000000;
		ts->tv_nsec = ns % 1000000000;
		return 0;
	}
	return syscall(SYS_clock_gettime, id, ts);
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
	struct timespec ts;
	(void)tz;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (tv) {
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t) *t = ts.tv_sec;
	return ts.tv_sec;
}
`

// RedisClock is the clock a redis-server reads through the shim: a file
// of eight bytes mapped by the rig and by the server.
type RedisClock struct {
	mem []byte
	// Env is what the server's environment needs to read it
	// (redistest.StartEnv).
	Env []string
	// Server is the redis-server the clock is mapped into, which a stall
	// stops (redistest.Server).
	Server interface{ Signal(os.Signal) error }

	mu      sync.Mutex
	due     []time.Time // stalls to come, the soonest first
	stalled []time.Time // stalls taken, at the command they stopped
	cutDue  []time.Time // cuts to come, the soonest first (cut.go)
	cut     []time.Time // cuts taken, at the decision whose reply they lost
}

// stallFor is how long a stall stops the server, in the kernel's time:
// past the limiter's timeout, so the command it meets is one the worker
// gives up on (a hung Redis is an outage, docs/contract.md) while the
// server may still carry it out once it runs again.
const stallFor = 2 * quota.DefaultTimeout

// NewRedisClock builds the shim into dir and the clock file beside it. The
// error says what is missing (a C compiler) when the shim cannot be built.
func NewRedisClock(dir string) (*RedisClock, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return nil, fmt.Errorf("no C compiler (cc) on PATH to build the clock shim redis-server preloads: apt-get install gcc")
	}
	src, lib := filepath.Join(dir, "vclock.c"), filepath.Join(dir, "vclock.so")
	if err := os.WriteFile(src, []byte(clockShim), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", lib, src).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the clock shim with %s: %v\n%s", cc, err, out)
	}
	file := filepath.Join(dir, "vclock")
	if err := os.WriteFile(file, make([]byte, 8), 0o644); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("map the clock file %s: %w", file, err)
	}
	return &RedisClock{mem: mem, Env: []string{"LD_PRELOAD=" + lib, "VCLOCK_FILE=" + file}}, nil
}

// Set makes t the server's wall clock.
func (c *RedisClock) Set(t time.Time) {
	atomic.StoreInt64((*int64)(unsafe.Pointer(&c.mem[0])), t.UnixNano())
}

// Close unmaps the file.
func (c *RedisClock) Close() error { return syscall.Munmap(c.mem) }

// DialHook hands the client each connection as one a cut can lose a
// reply on (cut.go).
func (c *RedisClock) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &cutConn{Conn: conn, c: c}, nil
	}
}

// ProcessHook sets the server's clock to the bubble's before each command,
// and stops the server when a stall is due.
func (c *RedisClock) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.before(cmd)
		return c.after(next(ctx, cmd))
	}
}

// ProcessPipelineHook does so before each pipeline.
func (c *RedisClock) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.before(cmds...)
		return c.after(next(ctx, cmds))
	}
}

// after records a command the server did not answer within its deadline
// as a stall of its own: the deadline runs on the kernel's clock, so a
// busy machine that keeps a real Redis from answering in time makes one,
// as it does in production, and the world says when.
func (c *RedisClock) after(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, redis.ErrPoolTimeout) {
		now := time.Now()
		c.mu.Lock()
		if n := len(c.stalled); n == 0 || !c.stalled[n-1].Equal(now) {
			c.stalled = append(c.stalled, now)
		}
		c.mu.Unlock()
	}
	return err
}

// stallAt has the server stopped for stallFor by the first decision of
// the limiter (its script's spend) sent at or after each of at, as a
// SIGSTOP (a paused VM, a swapping host) stops it: a decision the worker
// gives up on is the moment the fail policy, the fence and the write-back
// of unmetered calls are for.
func (c *RedisClock) stallAt(at []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.due = append(c.due, at...)
	sort.Slice(c.due, func(i, j int) bool { return c.due[i].Before(c.due[j]) })
}

// decides reports whether cmds hold a decision of the limiter: its
// script run in the mode that spends.
func decides(cmds []redis.Cmder) bool {
	for _, cmd := range cmds {
		for _, a := range cmd.Args() {
			if a == "spend" {
				return true
			}
		}
	}
	return false
}

// stalls is when the server was stopped.
func (c *RedisClock) stalls() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.stalled...)
}

// before sets the server's clock, and stops the server when a stall is
// due and cmds hold a decision. The server runs again stallFor later by
// the kernel's clock: the goroutine that waits for it sleeps in a system
// call, which holds the bubble's time still meanwhile, as the command on
// the socket does.
func (c *RedisClock) before(cmds ...redis.Cmder) {
	now := time.Now()
	c.Set(now)
	c.mu.Lock()
	due := len(c.due) > 0 && !now.Before(c.due[0]) && c.Server != nil && decides(cmds)
	if due {
		c.due = c.due[1:]
	}
	c.mu.Unlock()
	if due {
		c.stop(now)
	}
}

// stop stops the server for stallFor, a stall at now.
func (c *RedisClock) stop(now time.Time) {
	c.mu.Lock()
	c.stalled = append(c.stalled, now)
	c.mu.Unlock()
	if c.Server.Signal(syscall.SIGSTOP) != nil {
		return
	}
	go func() {
		ts := syscall.NsecToTimespec(int64(stallFor))
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
		c.Server.Signal(syscall.SIGCONT)
	}()
}

// applyNew creates the daemon's quota key on its Redis as an operator
// does before the first run: `ingest quota apply --new=KEY`, by the
// function that command calls.
func applyNew(dsn string, s Shape, log *slog.Logger) error {
	h := &wiring.Host{DSN: dsn, RedisURL: s.Redis, RedisHook: s.RedisHook, Costs: s.Costs, Logger: log, Clock: clock.System}
	ctx := context.Background()
	db, err := h.OpenForLimiter(ctx, true)
	if err != nil {
		return err
	}
	if db != nil {
		defer db.Close()
	}
	key := ledger.KeyHash(Key)
	l, closeLimiter, err := h.OpenLimiter(db, key)
	if err != nil {
		return err
	}
	defer closeLimiter()
	_, err = h.Apply(ctx, l, key, true, nil)
	return err
}

// flushRedis makes the Redis at url lose every key, as FLUSHALL does.
func flushRedis(url string) error {
	o, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	c := redis.NewClient(o)
	defer c.Close()
	if err := c.FlushAll(context.Background()).Err(); err != nil {
		return fmt.Errorf("FLUSHALL on the simulation's Redis: %w", err)
	}
	return nil
}

// Look is the limiter's count of each pool's window as its Redis holds it,
// read at At, as `ingest quota show` reads it.
type Look struct {
	At   time.Time
	Used map[string]int64
}

// lookRedis reads the limiter's state on s's Redis now.
func lookRedis(s Shape, log *slog.Logger) (Look, error) {
	h := &wiring.Host{RedisURL: s.Redis, RedisHook: s.RedisHook, Costs: s.Costs, Logger: log, Clock: clock.System}
	l, closeLimiter, err := h.OpenLimiter(nil, ledger.KeyHash(Key))
	if err != nil {
		return Look{}, err
	}
	defer closeLimiter()
	states, err := l.State(context.Background())
	if err != nil {
		return Look{}, fmt.Errorf("the limiter's state on Redis: %w", err)
	}
	lk := Look{At: time.Now(), Used: map[string]int64{}}
	for _, st := range states {
		lk.Used[st.Pool] = st.Used
	}
	return lk, nil
}

// peerFor is how long the worker of another database stays on the key,
// and peerEvery how often it runs.
const (
	peerFor   = 3 * time.Hour
	peerEvery = 10 * time.Minute
)

// peerDSN is the other worker's database.
func peerDSN(dir string) string { return filepath.Join(dir, "peer.db") }

// peer runs a worker of another database on the daemon's Redis key from
// now for peerFor: a host joining the fleet, and leaving it. The daemon's
// limiter then counts another ledger in the pools (docs: a worker joining
// or leaving the key re-plans). The first decision of its last run meets
// a stall (stallFirst).
func peer(h *History, up *Upstream, boot func() (string, time.Duration, bool), logw io.Writer) Join {
	rng := rand.New(rand.NewPCG(h.Seed, 0x9ee2))
	region := h.besideRegion(rng.IntN(1 << 20))
	from := time.Now()
	s := h.Shape
	if c, ok := s.RedisHook.(*RedisClock); ok && c.Server != nil {
		s.RedisHook = &stallFirst{RedisClock: c, at: from.Add(peerFor - peerEvery)}
	}
	runs := beside(peerDSN(h.Dir), s, region, peerEvery, from.Add(peerFor), up, boot, slog.New(slog.NewTextHandler(logw, nil)))
	return Join{Interval{from, time.Now()}, region, runs}
}

// stallFirst is the clock's hook with a stall of its own, at the first
// decision sent through it at or after at: a `run --once`, which ends as
// soon as its pass does, meets a Redis that answers it again within the
// pass, where the worker, not its next heartbeat, is to settle the
// decision it gave up on (docs/explanation/quota.md).
type stallFirst struct {
	*RedisClock
	at    time.Time
	taken atomic.Bool
}

func (s *stallFirst) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	hook := s.RedisClock.ProcessHook(next)
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.take(cmd)
		return hook(ctx, cmd)
	}
}

func (s *stallFirst) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	hook := s.RedisClock.ProcessPipelineHook(next)
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.take(cmds...)
		return hook(ctx, cmds)
	}
}

// take stops the server when cmds are the first decision at or after at.
func (s *stallFirst) take(cmds ...redis.Cmder) {
	if now := time.Now(); !now.Before(s.at) && decides(cmds) && s.taken.CompareAndSwap(false, true) {
		s.Set(now)
		s.stop(now)
	}
}

// peerFirst: at t a worker of another database ran its first run, where
// its database holds no reading of the upstream's time yet, so it asks.
func (h *History) peerFirst(t time.Time) bool {
	for _, j := range h.Peers {
		if len(j.Runs) > 0 && j.Runs[0].Contains(t) {
			return true
		}
	}
	return false
}

// readPeer adds what the other worker's database keeps to the history:
// its chart runs and its ledger, as a worker beside the daemon on its own
// database leaves them there.
func (h *History) readPeer(dsn string) error {
	ctx := context.Background()
	db, err := wiring.OpenExisting(ctx, dsn)
	if err != nil {
		return fmt.Errorf("the peer's database: %w", err)
	}
	defer db.Close()
	runs, err := readRuns(ctx, db.DB)
	if err != nil {
		return err
	}
	led, err := readLedger(ctx, db.DB)
	if err != nil {
		return err
	}
	for i := range led {
		led[i].Peer = true
	}
	us, err := readUnknowns(ctx, db.DB, true)
	if err != nil {
		return err
	}
	h.Unknowns = append(h.Unknowns, us...)
	h.Runs, h.Ledger = append(h.Runs, runs...), append(h.Ledger, led...)
	sort.SliceStable(h.Runs, func(i, j int) bool { return h.Runs[i].Started.Before(h.Runs[j].Started) })
	sort.SliceStable(h.Ledger, func(i, j int) bool { return h.Ledger[i].At.Before(h.Ledger[j].At) })
	return nil
}
