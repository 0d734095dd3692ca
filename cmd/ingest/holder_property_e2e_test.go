package main

// Random sequences of the documented moves between limiters and of runs,
// the right ones and strays with the settings of before a move, over two
// and three hosts sharing one quota key, with the fake upstream's charge
// as the oracle: never over the limit, and every stray refused before it
// spends.

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// movesWorld is the deployment a sequence walks: hosts (a database file
// each), one Redis, and where the window lives: on Redis for every host,
// or in the embedded limiter of one host that every other has left.
type movesWorld struct {
	t        *testing.T
	h        *harness
	rng      *rand.Rand
	redisURL string
	dbs      []string
	held     []string // per host: "", "redis" or "embedded", as the database records it
	embedded int      // the host whose embedded limiter holds the window; -1 while on Redis
	steps    []string
}

const movesLimit = 40

var movesRegions = []string{"US", "GB", "DE", "FR", "IN", "BR", "JP", "CA"}

func TestMovesBetweenLimitersNeverOverspend(t *testing.T) {
	t.Parallel()
	// Seeds of two and three hosts; with the record's refusal taken out,
	// most go red, some of them over the limit.
	for seed := uint64(1); seed <= 16; seed++ {
		c := struct {
			seed  uint64
			hosts int
		}{seed, 2 + int(seed%2)}
		t.Run(fmt.Sprintf("seed %d, %d hosts", c.seed, c.hosts), func(t *testing.T) {
			t.Parallel()
			w := newMovesWorld(t, c.seed, c.hosts)
			for range 12 {
				w.step()
			}
			if t.Failed() {
				t.Fatalf("seed %d: the steps:\n%s", c.seed, strings.Join(w.steps, "\n"))
			}
			t.Logf("seed %d: %d of %d charged after:\n%s", c.seed, w.h.chargedDefault(), movesLimit, strings.Join(w.steps, "\n"))
		})
	}
}

func newMovesWorld(t *testing.T, seed uint64, hosts int) *movesWorld {
	h := newHarness(t)
	h.tightCosts(movesLimit)
	w := &movesWorld{t: t, h: h, rng: rand.New(rand.NewPCG(seed, seed)), embedded: -1}
	h.withRedis()
	w.redisURL = h.env["REDIS_URL"]
	for i := range hosts {
		w.dbs = append(w.dbs, filepath.Join(h.dir, fmt.Sprintf("host%d.db", i)))
		w.held = append(w.held, "")
	}
	// Half the seeds start where the deployment starts: one host on its
	// embedded limiter.
	if w.rng.IntN(2) == 0 {
		w.embedded = 0
	}
	return w
}

// step takes one random action: a run as the deployment stands, a stray
// run with the other limiter's settings, or a move.
func (w *movesWorld) step() {
	switch n := w.rng.IntN(10); {
	case n < 4:
		w.rightRun()
	case n < 7:
		w.strayRun()
	default:
		w.move()
	}
	if charged := w.h.chargedDefault(); charged > movesLimit {
		w.t.Errorf("after %q the upstream charged %d units, over the limit %d", w.steps[len(w.steps)-1], charged, movesLimit)
	}
}

// on sets the settings of host i on Redis or on its embedded limiter.
func (w *movesWorld) on(i int, redis bool) {
	w.h.set("INGEST_DB", w.dbs[i])
	if redis {
		w.h.set("REDIS_URL", w.redisURL)
	} else {
		w.h.unset("REDIS_URL")
	}
}

func (w *movesWorld) regions() string {
	a, b := w.rng.IntN(len(movesRegions)), w.rng.IntN(len(movesRegions))
	return strings.Join(movesRegions[min(a, b):max(a, b)+1], ",")
}

// rightRun runs a host where the window is: any host on Redis, or the
// host that holds it on its embedded limiter.
func (w *movesWorld) rightRun() {
	i := w.embedded
	if i < 0 {
		i = w.rng.IntN(len(w.dbs))
	}
	w.on(i, w.embedded < 0)
	regions := w.regions()
	w.steps = append(w.steps, fmt.Sprintf("run host %d on %s (%s)", i, w.where(), regions))
	res := w.h.run("run", "--once", "--regions", regions)
	if res.code != 0 {
		w.t.Errorf("a run where the window is: want exit 0, got %s", res)
	}
	if w.held[i] == "" {
		w.held[i] = map[bool]string{true: "redis", false: "embedded"}[w.embedded < 0]
	}
}

// strayRun runs a host that has run, with the settings of the limiter
// its database does not record: a cron line nobody changed.
func (w *movesWorld) strayRun() {
	var ran []int
	for i, h := range w.held {
		if h != "" {
			ran = append(ran, i)
		}
	}
	if len(ran) == 0 {
		w.rightRun()
		return
	}
	i := ran[w.rng.IntN(len(ran))]
	w.on(i, w.held[i] == "embedded")
	w.steps = append(w.steps, fmt.Sprintf("stray run of host %d (held %s) on the other limiter", i, w.held[i]))
	before := w.h.chargedDefault()
	res := w.h.run("run", "--once")
	if res.code != 2 || !strings.Contains(res.stderr, "ingest quota seed --ledger") {
		w.t.Errorf("a stray run: want exit 2 naming quota seed, got %s", res)
	}
	if got := w.h.chargedDefault(); got != before {
		w.t.Errorf("a stray run spent %d units", got-before)
	}
}

// move takes the window to the other side, as docs/operations/growing.md says:
// onto Redis with every host's ledger, or back to one host's embedded
// limiter with every host's ledger.
func (w *movesWorld) move() {
	var ledgers []string
	for i, h := range w.held {
		if h != "" {
			ledgers = append(ledgers, "--ledger", w.dbs[i])
		}
	}
	if len(ledgers) == 0 {
		w.rightRun()
		return
	}
	if w.embedded >= 0 {
		w.on(w.embedded, true)
		w.steps = append(w.steps, fmt.Sprintf("quota seed onto Redis from %d ledgers", len(ledgers)/2))
		w.h.mustRun(0, append([]string{"quota", "seed"}, ledgers...)...)
		for i := range w.held {
			if w.held[i] != "" {
				w.held[i] = "redis"
			}
		}
		w.embedded = -1
		return
	}
	i := w.rng.IntN(len(w.dbs))
	w.on(i, false)
	w.steps = append(w.steps, fmt.Sprintf("quota seed back to host %d's embedded limiter from %d ledgers", i, len(ledgers)/2))
	if w.held[i] == "redis" {
		// the Redis it leaves is asked who spent (docs/operations/growing.md)
		ledgers = append(ledgers, "--leaving-redis", w.redisURL)
	}
	w.h.mustRun(0, append([]string{"quota", "seed"}, ledgers...)...)
	w.held[i], w.embedded = "embedded", i
}

func (w *movesWorld) where() string {
	if w.embedded < 0 {
		return "Redis"
	}
	return "its embedded limiter"
}
