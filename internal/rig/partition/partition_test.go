package partition

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
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
	"github.com/ingestworks/ingest/internal/rig/fakeyt"
	"github.com/ingestworks/ingest/internal/rig/seedtest"
	"github.com/ingestworks/ingest/ledger"
)

var (
	runFor = flag.Duration("partition.for", 80*time.Second, "how long the nemesis runs (make partition: 20m)")
	seed   = flag.String("partition.seed", "", `the nemesis's seed: a whole number replays one, "random" draws one from the kernel (make partition), empty is fixedSeed (make test); printed either way`)
	keep   = flag.String("partition.history", "", "a directory to write the history into (the upstream's charges, each ledger's calls), for a reader after the verdict")
)

const (
	limit  = 40
	window = 2 * time.Minute
	budget = 3 // each database's fail_open budget in the default pool, on Redis alone
	// grace is what a chart may wait beyond its plan and the outage: a
	// pass refused at the limit waits for room, at most a window.
	grace = window
	// sample is how often the test reads each database's recorded plan.
	sample = 5 * time.Second
	// every is the daemons' --every: each chart's configured cadence.
	every = time.Minute
	// delivery is how long after its admission a call may still reach
	// the upstream (the worker's bound on an attempt).
	delivery = ingest.Delivery
	// loadEvery is the cadence of each host's load: beside its daemon,
	// each host runs a chart no daemon of its database runs once every
	// loadEvery, unpaced (run --once), so that with the daemons the key
	// asks for at least twice its pool and its limiter refuses in every
	// run; and the nemesis starts it at once on a host it cuts from its
	// limiter, so that Redis's grants on the fail-open budget.
	loadEvery = time.Minute
	// limiterCut is the least the nemesis holds a host cut from its
	// limiter: long enough for the load it starts there to find the
	// limiter gone.
	limiterCut = 10 * time.Second
)

// Two quota keys, one per limiter: three hosts of their own SQLite files
// share a Redis (a primary and its replica), two hosts share a PostgreSQL
// database and its embedded limiter.
var (
	redisGroup = &group{name: "Redis", key: "partition-redis", budget: budget}
	pgGroup    = &group{name: "PostgreSQL", key: "partition-pg"}
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

// group is the hosts of one quota key.
type group struct {
	name, key string
	budget    int64 // fail-open units per database in a window
	hosts     []*host
}

// charge is one call the upstream charged: when it took the request,
// its units, and which host asked for what.
type charge struct {
	at                     time.Time
	units                  int64
	host, op, region, page string
}

// upstream is the fake upstream with the history of what it charged, per
// API key.
type upstream struct {
	mu      sync.Mutex
	fake    *fakeyt.Fake
	charges map[string][]charge
	names   map[string]string // a node's address -> its name
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	defer u.mu.Unlock()
	keys := []string{redisGroup.key, pgGroup.key}
	before := make([]int64, len(keys))
	for i, k := range keys {
		before[i] = u.fake.Charged(k)
	}
	u.fake.ServeHTTP(w, r)
	for i, k := range keys {
		if n := u.fake.Charged(k) - before[i]; n > 0 {
			ip, _, _ := net.SplitHostPort(r.RemoteAddr)
			q := r.URL.Query()
			u.charges[k] = append(u.charges[k], charge{at: time.Now(), units: n, host: u.names[ip],
				op: r.URL.Path, region: q.Get("regionCode"), page: q.Get("pageToken")})
		}
	}
}

// host is one ingest daemon in its namespace.
type host struct {
	name, db, regions string
	load              string // the chart its load runs
	kick              chan struct{}
	g                 *group
	env               []string
	cmd               *exec.Cmd
	done              chan struct{}
	log               *os.File
}

// fault is one thing the nemesis did, and whom it cut off while it held:
// the history's half the checker reads beside the upstream's charges.
type fault struct {
	kind     string // the nemesis's deck's
	what     string
	from, to time.Time
	hosts    []*host       // those it kept from spending
	offset   time.Duration // a clock step's
}

// fixedSeed is the nemesis's seed in make test's short lab: one of the
// 20-minute seeds every check passed on (docs/testing/partitions.md).
const fixedSeed = 3612789396792014425

func TestPartition(t *testing.T) {
	s := seedtest.From(t, "make partition SEED=", *seed, fixedSeed)[0]
	t.Logf("nemesis seed %d, for %s", s, *runFor)
	rng := rand.New(rand.NewPCG(s, s>>1|1))
	l := newLab(t, int(s%200)+1)
	dir := t.TempDir()
	bin := build(t, dir)
	costsFile := filepath.Join(dir, "costs.yaml")
	if err := os.WriteFile(costsFile, []byte(costs), 0o644); err != nil {
		t.Fatal(err)
	}
	redisGroup.hosts, pgGroup.hosts = nil, nil

	upIP := l.add("up", 2)
	up := &upstream{fake: fakeyt.New(), charges: map[string][]charge{}, names: map[string]string{}}
	ln, err := l.listen("up", upIP+":8080")
	if err != nil {
		t.Fatalf("listen in the upstream's namespace: %v", err)
	}
	srv := &http.Server{Handler: up}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	// Redis: a primary (rd) and its replica (rr), each in its namespace.
	ips := map[string]string{"rd": l.add("rd", 3), "rr": l.add("rr", 4)}
	startRedis(t, l, "rd", ips["rd"], filepath.Join(dir, "rd"), "Ready to accept connections")
	startRedis(t, l, "rr", ips["rr"], filepath.Join(dir, "rr"), "sync: Finished with success", "--replicaof", ips["rd"], "6379")
	primary, replica := "rd", "rr"
	pg := startPG(t, l, "pg", l.add("pg", 5))

	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir,
		"YOUTUBE_ENDPOINT=http://" + upIP + ":8080/", "INGEST_COSTS=" + costsFile}
	redisURL := func(node string) string { return "REDIS_URL=redis://" + ips[node] + ":6379/0" }
	// An admission counts once the replica holds it (--redis-replicas 1),
	// so that a failover loses none (docs/explanation/redis.md, "What the reserve
	// covers").
	// Each host's load is a chart no daemon of its database runs.
	for i, regions := range []string{"US,GB,NL", "DE,FR,SE", "IN,BR,PL"} {
		name := fmt.Sprintf("h%d", i+1)
		l.add(name, 11+i)
		db := filepath.Join(dir, name+".db")
		redisGroup.hosts = append(redisGroup.hosts, &host{name: name, db: db, regions: regions, load: []string{"MX", "ES", "IT"}[i], g: redisGroup,
			env: append(slices.Clone(base), "YOUTUBE_API_KEY="+redisGroup.key, redisURL(primary), "INGEST_REDIS_REPLICAS=1", "INGEST_DB="+db)})
	}
	for i := range 2 {
		name := fmt.Sprintf("p%d", i+1)
		l.add(name, 21+i)
		pgGroup.hosts = append(pgGroup.hosts, &host{name: name, db: pg.url(), regions: "NL,SE,PL,TR,MX,JP,KR,ES,IT", load: []string{"US", "IN"}[i], g: pgGroup,
			env: append(slices.Clone(base), "YOUTUBE_API_KEY="+pgGroup.key, "INGEST_DB="+pg.url())})
	}
	hosts := append(slices.Clone(redisGroup.hosts), pgGroup.hosts...)
	paced, unpaced := map[*group]int64{}, map[*group]int64{}
	for _, g := range []*group{redisGroup, pgGroup} {
		paced[g], unpaced[g] = configuredDemand(t, up.fake, g)
		if paced[g]+unpaced[g] < 2*limit || unpaced[g] >= limit {
			t.Fatalf("%s: the lab's workload asks for %d units a window (%d of them unpaced): it must ask for at least twice the limit %d, the unpaced less than it", g.name, paced[g]+unpaced[g], unpaced[g], limit)
		}
		t.Logf("%s: what was configured asks for %d units a %s window of a pool of %d (%.1f times it): %d paced (the daemons' charts), %d unpaced (the load)",
			g.name, paced[g]+unpaced[g], window, limit, float64(paced[g]+unpaced[g])/limit, paced[g], unpaced[g])
	}
	up.mu.Lock()
	for name, ip := range l.nodes {
		up.names[ip] = name
	}
	up.mu.Unlock()
	// Each host's clock is the machine's plus the offset in its file
	// (docs/operations/faults.md, "Rehearsing a clock step"): a namespace shares
	// the machine's clock, and a step is one host's alone.
	clockFile := func(h *host) string { return filepath.Join(dir, h.name+".clock") }
	setClock := func(h *host, offset string) {
		if err := os.WriteFile(clockFile(h), []byte(offset+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range hosts {
		setClock(h, "0s")
		h.env = append(h.env, "INGEST_REHEARSE_CLOCK_FILE="+clockFile(h))
	}
	h1 := redisGroup.hosts[0]
	apply := l.command(h1.name, bin, "quota", "apply", "--new="+ledger.KeyHash(redisGroup.key))
	apply.Env = h1.env
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("quota apply --new: %v\n%s", err, out)
	}
	start := func(h *host) {
		h.cmd = l.command(h.name, bin, "run", "--every", every.String(), "--regions", h.regions)
		h.cmd.Env = h.env
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
	stop := func(h *host) {
		h.cmd.Process.Signal(syscall.SIGTERM)
		<-h.done
	}
	started := time.Now()
	for _, h := range hosts {
		start(h)
	}
	t.Cleanup(func() {
		for _, h := range hosts {
			h.cmd.Process.Signal(syscall.SIGCONT)
			h.cmd.Process.Kill()
			<-h.done
			h.log.Close()
		}
	})
	plans := newPlanLog(t, pg)
	stopSampling := plans.sample(hosts)
	// The history begins once every database's daemon is up (it has
	// recorded its plan): a race-built binary's start under load is no
	// chart's gap.
	plans.await(hosts)
	begin := time.Now()
	var loadMu sync.Mutex // the hosts' env, which a failover changes
	var stopLoad []func()
	for _, h := range hosts {
		stopLoad = append(stopLoad, runLoad(t, l, bin, h, &loadMu))
	}

	// The nemesis: one fault at a time, each held for a while drawn from
	// the seed, then healed. Its kinds are dealt from a deck shuffled by
	// the seed, so that every kind comes once in each round of the deck.
	shaper := l.shaper("h1")
	switch shaper {
	case "tbf":
		t.Log("nemesis: this kernel has no netem (CONFIG_NET_SCH_NETEM is not set, no modules): a slow link is a token bucket (tbf) instead, a rate of kilobits a second whose queue drops what waits past its bound: delay, and loss where the queue overflows, not random loss")
	case "":
		t.Log("nemesis: no delays or loss on a link: this kernel has neither netem nor tbf")
	}
	kinds := []string{"limiter", "upstream", "kill", "stop", "replica", "failover", "clock", "quiet"}
	if shaper != "" {
		kinds = append(kinds, "delay")
	}
	var deck []string
	end := time.Now().Add(*runFor)
	var faults []fault
	for time.Now().Before(end) {
		if len(deck) == 0 {
			deck = slices.Clone(kinds)
			rng.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
		}
		kind := deck[0]
		deck = deck[1:]
		hold := time.Duration(2+rng.IntN(14)) * time.Second
		h := hosts[rng.IntN(len(hosts))]
		// The fault's outage, as the hosts see it, begins as the nemesis
		// begins it: a kill's wait, a failover's restarts are in it.
		f := fault{kind: kind, hosts: []*host{h}, from: time.Now()}
		var heal func()
		switch kind {
		case "limiter":
			hold = max(hold, limiterCut)
			if h.g == pgGroup {
				f.what, heal = h.name+" cut from PostgreSQL", func() { l.heal(h.name, "pg") }
				l.cut(h.name, "pg")
			} else {
				p := primary
				f.what, heal = h.name+" cut from the Redis primary ("+p+")", func() { l.heal(h.name, p) }
				l.cut(h.name, p)
			}
			select { // the host's load asks the limiter it was cut from
			case h.kick <- struct{}{}:
			default:
			}
		case "upstream":
			f.what, heal = h.name+" cut from the upstream", func() { l.heal(h.name, "up") }
			l.cut(h.name, "up")
		case "kill":
			f.what = h.name + " killed (-9), restarted after"
			h.cmd.Process.Kill()
			<-h.done
			heal = func() { start(h) }
		case "stop":
			f.what, heal = h.name+" stopped (SIGSTOP)", func() { h.cmd.Process.Signal(syscall.SIGCONT) }
			h.cmd.Process.Signal(syscall.SIGSTOP)
		case "clock":
			// A step within the limiter's guard, or past it (which stops
			// the host's spending until it is healed), either way.
			offset := []string{"90s", "-2m", "15m", "-1h"}[rng.IntN(4)]
			f.what, heal = h.name+"'s clock stepped "+offset, func() { setClock(h, "0s") }
			f.offset, _ = time.ParseDuration(offset)
			setClock(h, offset)
		case "delay":
			spec := fmt.Sprintf("netem delay %dms loss %d%%", 200+rng.IntN(2800), rng.IntN(20))
			if shaper == "tbf" {
				spec = fmt.Sprintf("tbf rate %dkbit burst 4kb latency %dms", 16<<rng.IntN(5), 100+rng.IntN(900))
			}
			f.what, heal = h.name+" link "+spec, func() { l.undelay(h.name) }
			l.delay(h.name, spec)
		case "replica":
			// Every admission waits for the replica, so every Redis
			// host is kept from spending while it is cut off.
			p, r := primary, replica
			f.what, f.hosts, heal = "the Redis primary ("+p+") cut from its replica ("+r+")", redisGroup.hosts, func() {
				l.heal(p, r)
				awaitReplica(t, l, p, ips[p])
			}
			l.cut(p, r)
		case "failover":
			// The operator's failover, as docs/operations/faults.md has it: the
			// replica promoted, every host restarted with the new
			// REDIS_URL; the old primary, once it is back, follows it.
			p, r := primary, replica
			l.cut(p, r)
			redisCLI(t, l, r, ips[r], "REPLICAOF", "NO", "ONE")
			for _, rh := range redisGroup.hosts {
				stop(rh)
				loadMu.Lock()
				rh.env = append(slices.DeleteFunc(rh.env, func(e string) bool { return strings.HasPrefix(e, "REDIS_URL=") }), redisURL(r))
				loadMu.Unlock()
				start(rh)
			}
			primary, replica = r, p
			f.what, f.hosts = "failover: "+p+" cut from "+r+", "+r+" promoted (REPLICAOF NO ONE), the Redis hosts restarted on it; "+p+" follows "+r+" after", redisGroup.hosts
			heal = func() {
				l.heal(p, r)
				redisCLI(t, l, p, ips[p], "REPLICAOF", ips[r], "6379")
				awaitReplica(t, l, r, ips[r])
			}
		default:
			f.what, f.hosts, heal = "quiet", nil, func() {}
		}
		time.Sleep(hold) // the fault's own span: the nemesis's schedule, not a wait for a result
		heal()
		f.to = time.Now()
		faults = append(faults, f)
		time.Sleep(time.Duration(1+rng.IntN(5)) * time.Second)
	}
	for _, s := range stopLoad {
		s()
	}
	for _, h := range hosts {
		stop(h)
	}
	stopSampling()
	finish := time.Now()
	var lines []string
	for _, f := range faults {
		lines = append(lines, fmt.Sprintf("%s %s for %s", f.from.UTC().Format("15:04:05"), f.what, f.to.Sub(f.from).Round(time.Second)))
	}
	t.Logf("nemesis history (%d faults):\n  %s", len(faults), strings.Join(lines, "\n  "))
	var steps []step
	for _, f := range faults {
		if f.kind == "clock" {
			h := f.hosts[0]
			steps = append(steps, step{db: h.g.label(h.db), offset: f.offset, from: f.from, to: f.to})
		}
	}
	for _, g := range []*group{redisGroup, pgGroup} {
		rec := readRecord(t, g, pg)
		if *keep != "" {
			writeHistory(t, *keep, up, g, rec.calls)
		}
		checkCharges(t, up, g, rec)
		checkPages(t, up, g, rec)
		checkWorkload(t, g, rec, faults)
		checkGaps(t, g, rec, plans, faults, steps, sustains(t, up, g, paced[g], unpaced[g], begin, finish), started, begin, finish)
	}
	if *keep != "" {
		writeHosts(t, *keep, hosts, plans)
	}
}

// runLoad runs h's load once every loadEvery, unpaced, in h's namespace
// on its database, and at once when h.kick is sent to, until the returned
// stop is called; stop waits for the run in flight, which a SIGTERM ends
// at its page.
func runLoad(t *testing.T, l *lab, bin string, h *host, mu *sync.Mutex) (stop func()) {
	t.Helper()
	h.kick = make(chan struct{}, 1)
	quit, done := make(chan struct{}), make(chan struct{})
	var cur *exec.Cmd
	go func() {
		defer close(done)
		for {
			mu.Lock()
			cmd := l.command(h.name, bin, "run", "--once", "--regions", h.load)
			cmd.Env = slices.Clone(h.env)
			cmd.Stdout, cmd.Stderr = h.log, h.log
			err := cmd.Start()
			cur = cmd
			mu.Unlock()
			if err == nil {
				cmd.Wait()
			}
			select {
			case <-quit:
				return
			case <-h.kick:
			case <-time.After(loadEvery): // the load's cadence, not a wait for a result
			}
		}
	}()
	return func() {
		close(quit)
		mu.Lock()
		if cur != nil && cur.Process != nil {
			cur.Process.Signal(syscall.SIGTERM)
		}
		mu.Unlock()
		<-done
	}
}

// sustains is the cadence g's pool sustains for its daemons' charts: the
// unpaced calls take their share first (the load at its configured
// cadence, or what the upstream charged besides the daemons' chart pages,
// the category and catalogue reads included, a window on average over the
// run, whichever is more), and the slack a plan of whole passes keeps
// (slackOf); the daemons' charts share the rest evenly, on their slots
// (sustained).
func sustains(t *testing.T, up *upstream, g *group, paced, unpaced int64, begin, end time.Time) time.Duration {
	up.mu.Lock()
	cs := inDefaultPool(up.charges[g.key])
	up.mu.Unlock()
	charts := map[string]bool{} // host and chart of the daemons'
	for _, h := range g.hosts {
		for _, o := range g.hosts {
			if o.db == h.db {
				for _, r := range strings.Split(o.regions, ",") {
					charts[h.name+" "+r] = true
				}
			}
		}
	}
	var other int64
	for _, c := range cs {
		if c.at.Before(begin) || c.at.After(end) || ledgerOp(c.op) == "videos.list" && charts[c.host+" "+c.region] {
			continue
		}
		other += c.units
	}
	measured := int64(float64(other) * float64(window) / float64(end.Sub(begin)))
	var dearest int64
	for c := range charts {
		_, region, _ := strings.Cut(c, " ")
		dearest = max(dearest, chartPages(t, up.fake, region))
	}
	slack := slackOf(limit, dearest)
	left := max(limit-slack-max(unpaced, measured), 1)
	every := sustained(every, paced, left)
	t.Logf("%s: besides the daemons' charts the upstream charged %d units, %d a %s window on average (the load configured: %d); the daemons' charts (%d a window) share %d (the pool's %d, less a pass of slack, %d): the cadence the pool sustains for them, on their slots, is %s",
		g.name, other, measured, window, unpaced, paced, left, limit, slack, every.Round(time.Second))
	return every
}

// configuredDemand is what g's configuration asks of its key's default
// pool in a window, each a unit a page of the chart the upstream holds:
// paced, each chart its daemons run (once per database) at every;
// unpaced, each host's load at loadEvery.
func configuredDemand(t *testing.T, f *fakeyt.Fake, g *group) (paced, unpaced int64) {
	t.Helper()
	seen := map[string]bool{}
	for _, h := range g.hosts {
		if !seen[h.db] {
			seen[h.db] = true
			for _, r := range strings.Split(h.regions, ",") {
				paced += chartPages(t, f, r) * int64(window/every)
			}
		}
		unpaced += chartPages(t, f, h.load) * int64(window/loadEvery)
	}
	return paced, unpaced
}

// chartPages is how many pages of 50 (the worker's page) region's chart
// holds at the upstream, asked under a key of the test's own.
func chartPages(t *testing.T, f *fakeyt.Fake, region string) int64 {
	t.Helper()
	rec := httptest.NewRecorder()
	f.ServeHTTP(rec, httptest.NewRequest("GET", "/youtube/v3/videos?part=id&chart=mostPopular&maxResults=50&key=lab-configuration&regionCode="+region, nil))
	var page struct {
		PageInfo struct{ TotalResults int64 } `json:"pageInfo"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil || page.PageInfo.TotalResults == 0 {
		t.Fatalf("the upstream's chart of %s: %v: %s", region, err, rec.Body.String())
	}
	return (page.PageInfo.TotalResults + 49) / 50
}

// startRedis starts redis-server in node's namespace, on its address, and
// waits for the line of its log that says it is ready: the replica's
// first sync with its primary, since every admission waits for it.
func startRedis(t *testing.T, l *lab, node, ip, dir, ready string, args ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rd := l.command(node, append([]string{"redis-server", "--bind", ip, "--port", "6379", "--save", "", "--appendonly", "yes",
		"--dir", dir, "--protected-mode", "no"}, args...)...)
	out, err := rd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.Start(); err != nil {
		t.Fatalf("redis-server: %v", err)
	}
	t.Cleanup(func() { rd.Process.Kill(); rd.Wait() })
	awaitReady(t, out, ready)
}

// awaitReplica waits, after a cut between the Redis primary and its
// replica heals, for the primary at ip (in node) to have its replica
// acknowledge its writes again: until then every admission is refused,
// so the outage the checker counts lasts that long, not the cut's hold
// alone. A replica that is not back within a minute is said, and the
// outage ends there.
func awaitReplica(t *testing.T, l *lab, node, ip string) {
	t.Helper()
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		out, _ := l.command(node, "redis-cli", "-h", ip, "-p", "6379", "WAIT", "1", "500").Output()
		if strings.TrimSpace(string(out)) == "1" {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("nemesis: the Redis primary at %s had no replica acknowledge its writes within a minute of the heal", ip)
}

// redisCLI runs one command on the Redis at ip, from inside node.
func redisCLI(t *testing.T, l *lab, node, ip string, args ...string) {
	t.Helper()
	out, err := l.command(node, append([]string{"redis-cli", "-h", ip, "-p", "6379"}, args...)...).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "OK") {
		t.Errorf("redis-cli %s on %s: %v: %s", strings.Join(args, " "), node, err, out)
	}
}

// build builds the binary the hosts run, with the race detector, so that
// a data race the nemesis's timing provokes ends a host with its report
// (SQLite's translated C is left out of it: it is not Go's to check).
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "ingest")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-race", "-gcflags=modernc.org/sqlite/lib=-race=false", "-o", bin, "../../../cmd/ingest").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// awaitReady waits for redis-server's line holding ready.
func awaitReady(t *testing.T, out io.Reader, ready string) {
	t.Helper()
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if strings.Contains(sc.Text(), ready) {
			go io.Copy(io.Discard, out)
			return
		}
	}
	t.Fatalf("redis-server ended before its log said %q", ready)
}
