package quota_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/pgtest"
	"github.com/ingestworks/ingest/internal/rig/redistest"
)

// The property run: processes x workers callers, 1-unit and 100+1-unit
// calls at random, demand far above supply, over more than three windows.
const (
	propProcs    = 8
	propWindow   = 3 * time.Second
	propDuration = 10 * time.Second
	propLimit    = 600 // reserve 100: 500 units per window in default
	propReserve  = 100
	propSearches = 4 // search.list calls per window
)

func propCosts(t testing.TB) *ingest.Costs {
	return testCosts(t, propLimit, propReserve, propSearches, propWindow)
}

// TestExactness runs the limiter from several OS processes at once and
// checks every admitted call against an exact oracle.
func TestExactness(t *testing.T) {
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		srv := redistest.Start(t)
		runProperty(t, "redis", srv.Addr, 4)
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		runProperty(t, "sqlite", filepath.Join(t.TempDir(), "shared.db"), 2)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url := pgtest.URL(t)
		// The schema and the pools' settings, before the processes start:
		// the run is about the window, not the first call's settings.
		l := pgLimiter(t, url, limOpts{QuotaKey: "prop", Costs: propCosts(t)})
		if _, err := l.ApplyConfig(context.Background()); err != nil {
			t.Fatal(err)
		}
		runProperty(t, "postgres", url, 4)
	})
}

func runProperty(t *testing.T, backend, target string, workers int) {
	dir := t.TempDir()
	start := time.Now().Add(1500 * time.Millisecond) // let every process start first
	var procs []*exec.Cmd
	for i := range propProcs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
		cmd.Env = append(os.Environ(),
			"QUOTA_HELPER="+backend, "QUOTA_TARGET="+target, "QUOTA_KEY=prop",
			"QUOTA_OUT="+filepath.Join(dir, fmt.Sprintf("p%d.log", i)),
			"QUOTA_WORKERS="+strconv.Itoa(workers), "QUOTA_SEED="+strconv.Itoa(i),
			"QUOTA_START="+strconv.FormatInt(start.UnixMilli(), 10),
			"QUOTA_UNTIL="+strconv.FormatInt(start.Add(propDuration).UnixMilli(), 10))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("process %d output:\n%s", i, out.String())
			}
		})
	}
	for i, p := range procs {
		if err := p.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	checkOracle(t, readRecords(t, dir), propCosts(t))
}

// record is one decision as a helper process saw it.
type record struct {
	allowed bool
	id      string
	at      int64 // limiter clock, ms
	op      string
	units   map[string]int64 // admitted: what it took; refused: what it asked
}

func readRecords(t *testing.T, dir string) []record {
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	if len(files) != propProcs {
		t.Fatalf("got %d process logs, want %d", len(files), propProcs)
	}
	costs := propCosts(t)
	var recs []record
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line == "" {
				continue // a process on a loaded machine may have decided nothing
			}
			var r record
			var kind string
			if _, err := fmt.Sscan(line, &kind, &r.id, &r.at, &r.op); err != nil {
				t.Fatalf("%s: %q: %v", f, line, err)
			}
			if kind == "E" || kind == "U" {
				t.Fatalf("%s: a call failed or went unmetered: %s", f, line)
			}
			r.allowed = kind == "A"
			ch, _ := costs.Op(r.op)
			r.units = map[string]int64{}
			for _, c := range ch {
				r.units[c.Pool] = c.Units
			}
			recs = append(recs, r)
		}
	}
	return recs
}

// checkOracle fails the test with the oracle's findings.
func checkOracle(t *testing.T, recs []record, costs *ingest.Costs) {
	summary, problems := oracle(recs, costs)
	t.Log(summary)
	for i, p := range problems {
		if i == 10 {
			t.Fatalf("... and %d more", len(problems)-i)
		}
		t.Error(p)
	}
}

// oracle: over every trailing window ending at an admitted call, no pool
// holds more than its capacity; every refusal happened when some pool it
// draws from had no room for it (no under-admission); ids are unique; and
// demand did exceed supply, or the run proves nothing.
func oracle(recs []record, costs *ingest.Costs) (summary string, problems []string) {
	sums := map[string]*windowSums{}
	for _, p := range costs.Pools {
		w := newWindowSums(recs, p.Name, p.Window.Milliseconds())
		sums[p.Name] = w
		for _, at := range w.at {
			if u := w.used(at); u > p.Capacity() {
				problems = append(problems, fmt.Sprintf("pool %s: %d units in the window ending %d, capacity %d", p.Name, u, at, p.Capacity()))
			}
		}
		summary += fmt.Sprintf("pool %s: %d units admitted, peak window %d of %d; ", p.Name, w.total, w.peak(), p.Capacity())
	}
	ids := map[string]bool{}
	var admitted, refused int
	for _, r := range recs {
		switch {
		case r.allowed && ids[r.id]:
			problems = append(problems, fmt.Sprintf("id %s admitted twice", r.id))
		case r.allowed:
			ids[r.id] = true
			admitted++
		case !justified(r, costs, sums):
			problems = append(problems, fmt.Sprintf("refusal of %s at %d while every pool it draws from had room", r.op, r.at))
			fallthrough
		default:
			refused++
		}
	}
	if refused == 0 {
		problems = append(problems, "no refusals: demand never exceeded supply, the run proves nothing")
	}
	return summary + fmt.Sprintf("%d calls admitted, %d refused", admitted, refused), problems
}

// windowSums answers "units admitted in (t-window, t]" for one pool.
type windowSums struct {
	at     []int64
	prefix []int64 // prefix[i] = units of the first i calls
	window int64
	total  int64
}

func newWindowSums(recs []record, pool string, window int64) *windowSums {
	type e struct{ at, u int64 }
	var es []e
	for _, r := range recs {
		if r.allowed && r.units[pool] > 0 {
			es = append(es, e{r.at, r.units[pool]})
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].at < es[j].at })
	w := &windowSums{window: window, prefix: []int64{0}}
	for _, x := range es {
		w.at = append(w.at, x.at)
		w.total += x.u
		w.prefix = append(w.prefix, w.total)
	}
	return w
}

func (w *windowSums) used(t int64) int64 {
	hi := sort.Search(len(w.at), func(i int) bool { return w.at[i] > t })
	lo := sort.Search(len(w.at), func(i int) bool { return w.at[i] > t-w.window })
	return w.prefix[hi] - w.prefix[lo]
}

func (w *windowSums) peak() int64 {
	var m int64
	for _, at := range w.at {
		m = max(m, w.used(at))
	}
	return m
}

// justified: some pool r draws from had no room for it at r.at, counting
// every call admitted at or before r.at (calls admitted later in the same
// ms count too: the check can only be lenient there, never wrong).
func justified(r record, costs *ingest.Costs, sums map[string]*windowSums) bool {
	for pool, units := range r.units {
		p, _ := costs.Pool(pool)
		if sums[pool].used(r.at)+units > p.Capacity() {
			return true
		}
	}
	return false
}

// TestOracleCatchesFaults: the oracle flags over-admission, a refusal with
// room, a reused id and a run without refusals.
func TestOracleCatchesFaults(t *testing.T) {
	costs, err := costs.Parse("oracle costs", []byte(`pools: {default: {limit: 3, window: 1s}}
operations: {videos.list: {default: 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	v := func(allowed bool, id string, at int64) record {
		return record{allowed: allowed, id: id, at: at, op: "videos.list", units: map[string]int64{"default": 1}}
	}
	for _, tc := range []struct {
		name string
		recs []record
		bad  bool
	}{
		{"exact", []record{v(true, "1-1", 0), v(true, "2-2", 500), v(true, "3-3", 999), v(false, "", 999), v(true, "4-4", 1000)}, false},
		{"over", []record{v(true, "1-1", 0), v(true, "2-2", 500), v(true, "3-3", 999), v(false, "", 999), v(true, "4-4", 999)}, true},
		{"refused with room", []record{v(true, "1-1", 0), v(true, "2-2", 500), v(false, "", 999)}, true},
		{"id twice", []record{v(true, "1-1", 0), v(true, "1-1", 500), v(true, "2-2", 600), v(false, "", 700)}, true},
		{"no refusal", []record{v(true, "1-1", 0)}, true},
	} {
		_, problems := oracle(tc.recs, costs)
		if got := len(problems) > 0; got != tc.bad {
			t.Errorf("%s: problems %q, want flagged %v", tc.name, problems, tc.bad)
		}
	}
}

// TestHelperProcess is one caller process of TestExactness; it does nothing
// unless QUOTA_HELPER is set.
func TestHelperProcess(t *testing.T) {
	backend := os.Getenv("QUOTA_HELPER")
	if backend == "" {
		t.Skip("a helper process for TestExactness")
	}
	l := helperLimiter(t, backend, os.Getenv("QUOTA_TARGET"))
	workers, _ := strconv.Atoi(os.Getenv("QUOTA_WORKERS"))
	seed, _ := strconv.Atoi(os.Getenv("QUOTA_SEED"))
	startMS, _ := strconv.ParseInt(os.Getenv("QUOTA_START"), 10, 64)
	untilMS, _ := strconv.ParseInt(os.Getenv("QUOTA_UNTIL"), 10, 64)
	f, err := os.Create(os.Getenv("QUOTA_OUT"))
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewWriter(f)
	var mu sync.Mutex
	emit := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format+"\n", args...)
		mu.Unlock()
	}
	time.Sleep(time.Until(time.UnixMilli(startMS)))
	var wg sync.WaitGroup
	for w := range workers {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(w)))
		wg.Go(func() { helperWorker(l, rng, untilMS, emit) })
	}
	wg.Wait()
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func helperWorker(l limiter, rng *rand.Rand, untilMS int64, emit func(string, ...any)) {
	for time.Now().UnixMilli() < untilMS {
		op := "videos.list"
		if rng.IntN(10) == 0 {
			op = "search.list"
		}
		d, err := l.Take(context.Background(), ingest.Caller{}, op)
		switch {
		case err != nil:
			emit("E - 0 %s %q", op, err.Error())
		case d.Unmetered:
			emit("U %s %d %s", d.ID, d.At.UnixMilli(), op)
		case d.Allowed:
			emit("A %s %d %s", d.ID, d.At.UnixMilli(), op)
		default:
			emit("R - %d %s", d.At.UnixMilli(), op)
		}
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
	}
}

func helperLimiter(t *testing.T, backend, target string) limiter {
	opts := limOpts{QuotaKey: os.Getenv("QUOTA_KEY"), Costs: propCosts(t), Timeout: time.Minute}
	if d, err := time.ParseDuration(os.Getenv("QUOTA_TIMEOUT")); err == nil {
		opts.Timeout = d
	}
	switch backend {
	case "postgres":
		l, err := newPostgres(openStore(t, target), opts)
		if err != nil {
			t.Fatal(err)
		}
		return l
	case "redis":
		l, err := openRedis(t, redis.NewClient(&redis.Options{Addr: target}), opts)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	db := openDB(t, target, false)
	db.SetMaxOpenConns(1) // one writer per process; processes take turns on the file lock
	db.SetMaxIdleConns(1)
	// Eight processes hammering one file on a loaded two-core machine can
	// keep one of them off the lock for longer than the store's 10 s:
	// exactness is under test here, not fairness.
	if _, err := db.Exec("PRAGMA busy_timeout = 60000"); err != nil {
		t.Fatal(err)
	}
	l, err := newSQLite(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
