package partition

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/fakeyt"
	"github.com/ingestworks/ingest/wiring"
)

var (
	runFor = flag.Duration("partition.for", 90*time.Second, "how long the nemesis runs (make partition: 20m)")
	seed   = flag.Uint64("partition.seed", 0, "the nemesis's seed; 0 draws one from the clock (printed either way)")
)

const (
	apiKey = "partition-key"
	limit  = 40
	window = 2 * time.Minute
	budget = 3 // each database's fail_open budget in the default pool
)

// costs: a pool small enough that the hosts meet its limit many times in
// a run, over a window the run spans many times.
var costs = fmt.Sprintf(`pools:
  default: {limit: %d, reserve: 0, window: %s, fail_open: {max_cost: 1, budget: %d}}
  search:  {limit: 100, reserve: 0, window: 24h}
  stats:   {limit: 10000, reserve: 0, window: 24h}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 1}
  videos.batchGetStats: {stats: 1}
`, limit, window, budget)

var hostRegions = []string{"US,GB,JP,KR", "DE,FR,IT,ES", "IN,BR,MX,CA"}

// charge is one call the upstream charged: when, and its units.
type charge struct {
	at    time.Time
	units int64
}

// upstream is the fake upstream with the history of what it charged.
type upstream struct {
	mu      sync.Mutex
	fake    *fakeyt.Fake
	charges []charge
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	before := u.fake.Charged(apiKey)
	u.fake.ServeHTTP(w, r)
	if n := u.fake.Charged(apiKey) - before; n > 0 {
		u.charges = append(u.charges, charge{time.Now(), n})
	}
}

// host is one ingest daemon in its namespace.
type host struct {
	name, db string
	cmd      *exec.Cmd
	done     chan struct{}
	log      *os.File
}

func TestPartition(t *testing.T) {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("nemesis seed %d (replay: make partition SEED=%d), for %s", s, s, *runFor)
	rng := rand.New(rand.NewPCG(s, s>>1|1))
	l := newLab(t, int(s%200)+1)
	dir := t.TempDir()
	bin := build(t, dir)
	costsFile := filepath.Join(dir, "costs.yaml")
	if err := os.WriteFile(costsFile, []byte(costs), 0o644); err != nil {
		t.Fatal(err)
	}

	upIP := l.add("up", 2)
	up := &upstream{fake: fakeyt.New()}
	ln, err := l.listen("up", upIP+":8080")
	if err != nil {
		t.Fatalf("listen in the upstream's namespace: %v", err)
	}
	srv := &http.Server{Handler: up}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	rdIP := l.add("rd", 3)
	rd := l.command("rd", "redis-server", "--bind", rdIP, "--port", "6379", "--save", "", "--appendonly", "yes",
		"--dir", dir, "--protected-mode", "no")
	rdOut, err := rd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() { rd.Process.Kill(); rd.Wait() })
	awaitReady(t, rdOut)

	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "YOUTUBE_API_KEY=" + apiKey,
		"YOUTUBE_ENDPOINT=http://" + upIP + ":8080/", "REDIS_URL=redis://" + rdIP + ":6379/0", "INGEST_COSTS=" + costsFile}
	var hosts []*host
	for i := range hostRegions {
		name := fmt.Sprintf("h%d", i+1)
		l.add(name, 11+i)
		hosts = append(hosts, &host{name: name, db: filepath.Join(dir, name+".db")})
	}
	apply := l.command("h1", bin, "quota", "apply", "--new="+wiring.KeyHash(apiKey))
	apply.Env = append(env, "INGEST_DB="+hosts[0].db)
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("quota apply --new: %v\n%s", err, out)
	}
	start := func(i int) {
		h := hosts[i]
		h.cmd = l.command(h.name, bin, "run", "--every", "1m", "--regions", hostRegions[i])
		h.cmd.Env = append(env, "INGEST_DB="+h.db)
		if h.log == nil {
			h.log, _ = os.Create(filepath.Join(dir, h.name+".log"))
		}
		h.cmd.Stdout, h.cmd.Stderr = h.log, h.log
		if err := h.cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", h.name, err)
		}
		h.done = make(chan struct{})
		go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(h.cmd, h.done)
	}
	for i := range hosts {
		start(i)
	}
	t.Cleanup(func() {
		for _, h := range hosts {
			h.cmd.Process.Signal(syscall.SIGCONT)
			h.cmd.Process.Kill()
			<-h.done
			h.log.Close()
		}
	})

	// The nemesis: one fault at a time, each held for a while drawn from
	// the seed, then healed; the history is what the upstream charged.
	delays := l.canDelay("h1")
	if !delays {
		t.Log("nemesis: no delays or loss: this kernel has no netem (tc qdisc netem)")
	}
	t.Log("nemesis: no clock step: the binary reads the system clock, which a network namespace shares; no PostgreSQL or Redis replica in this run")
	end := time.Now().Add(*runFor)
	var faults []string
	for time.Now().Before(end) {
		hold := time.Duration(2+rng.IntN(14)) * time.Second
		i := rng.IntN(len(hosts))
		h := hosts[i]
		var what string
		var heal func()
		switch k := rng.IntN(6); {
		case k == 0:
			what, heal = h.name+" cut from Redis", func() { l.heal(h.name, "rd") }
			l.cut(h.name, "rd")
		case k == 1:
			what, heal = h.name+" cut from the upstream", func() { l.heal(h.name, "up") }
			l.cut(h.name, "up")
		case k == 2:
			what = h.name + " killed (-9), restarted after"
			h.cmd.Process.Kill()
			<-h.done
			heal = func() { start(i) }
		case k == 3:
			what, heal = h.name+" stopped (SIGSTOP)", func() { h.cmd.Process.Signal(syscall.SIGCONT) }
			h.cmd.Process.Signal(syscall.SIGSTOP)
		case k == 4 && delays:
			spec := fmt.Sprintf("delay %dms loss %d%%", 200+rng.IntN(2800), rng.IntN(20))
			what, heal = h.name+" link "+spec, func() { l.undelay(h.name) }
			l.delay(h.name, spec)
		default:
			what, heal = "quiet", func() {}
		}
		faults = append(faults, fmt.Sprintf("%s %s for %s", time.Now().UTC().Format("15:04:05"), what, hold))
		time.Sleep(hold) // the fault's own span: the nemesis's schedule, not a wait for a result
		heal()
		time.Sleep(time.Duration(1+rng.IntN(5)) * time.Second)
	}
	for _, h := range hosts {
		h.cmd.Process.Signal(syscall.SIGTERM)
		<-h.done
	}
	t.Logf("nemesis history (%d faults):\n  %s", len(faults), strings.Join(faults, "\n  "))
	check(t, up, hosts)
}

// check is the verdict on the history: the upstream's charge in every
// trailing window within the limit plus each database's fail-open budget,
// and every page charged in some host's ledger.
func check(t *testing.T, up *upstream, hosts []*host) {
	up.mu.Lock()
	cs := slices.Clone(up.charges)
	charged := up.fake.ChargedByOp(apiKey)[ingest.OpVideosList]
	up.mu.Unlock()
	bound := int64(limit + budget*len(hosts))
	worst, worstAt := int64(0), time.Time{}
	for i := range cs {
		var sum int64
		for j := i; j < len(cs) && cs[j].at.Sub(cs[i].at) < window; j++ {
			sum += cs[j].units
		}
		if sum > worst {
			worst, worstAt = sum, cs[i].at
		}
	}
	t.Logf("charged %d units in %d calls; the most in a trailing %s window: %d (from %s), bound %d (limit %d + %d databases x fail-open budget %d)",
		sumUnits(cs), len(cs), window, worst, worstAt.UTC().Format("15:04:05"), bound, limit, len(hosts), budget)
	if worst > bound {
		t.Errorf("the upstream charged %d units in the %s window from %s, over the bound %d", worst, window, worstAt.UTC().Format(time.RFC3339), bound)
	}
	var ledgered, stored int64
	for _, h := range hosts {
		db, err := sql.Open("sqlite", "file:"+h.db+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var n, p, gap int64
		db.QueryRow(`SELECT count(*) FROM ledger WHERE op = 'videos.list'`).Scan(&n)
		db.QueryRow(`SELECT COALESCE(sum(pages), 0) FROM runs`).Scan(&p)
		db.QueryRow(`SELECT COALESCE(max(g), 0) FROM (SELECT started_ms - lag(started_ms) OVER (PARTITION BY region ORDER BY started_ms) AS g
			FROM runs WHERE status = 'completed' AND kind = 'trending')`).Scan(&gap)
		db.Close()
		ledgered, stored = ledgered+n, stored+p
		t.Logf("%s (%s): %d chart calls in its ledger, %d pages stored, the longest gap between a chart's completed runs %s",
			h.name, hostRegions[slices.Index(hosts, h)], n, p, time.Duration(gap)*time.Millisecond)
	}
	t.Logf("chart pages: %d charged, %d in the hosts' ledgers, %d stored", charged, ledgered, stored)
	if charged > ledgered {
		t.Errorf("the upstream charged %d chart calls, the hosts' ledgers hold %d: a call was made that no ledger holds", charged, ledgered)
	}
}

func sumUnits(cs []charge) (n int64) {
	for _, c := range cs {
		n += c.units
	}
	return n
}

// build builds the binary the hosts run.
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "ingest")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../cmd/ingest").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// awaitReady waits for redis-server's line saying it accepts connections.
func awaitReady(t *testing.T, out io.Reader) {
	t.Helper()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "Ready to accept connections") {
			go io.Copy(io.Discard, out)
			return
		}
	}
	t.Fatal("redis-server ended before it accepted connections")
}
