package main

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/npmtest"
	"github.com/ingestworks/ingest/pace"
)

// floodCalls is how many calls each client makes: more than its daily
// share, so that each meets its end.
const floodCalls = 60

// floodPython is a Python client's loop through the proxy: floodCalls
// calls, counting the answers and the HttpErrors by status.
const floodPython = `
import sys, collections
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
root, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
yt = build("youtube", "v3", developerKey=token, cache_discovery=False,
           discoveryServiceUrl=root + "/discovery/v1/apis/{api}/{apiVersion}/rest")
seen = collections.Counter()
for i in range(n):
    try:
        yt.videos().list(part="id", chart="mostPopular", regionCode="GB").execute(num_retries=0)
        seen["200"] += 1
    except HttpError as e:
        seen[str(e.resp.status)] += 1
print(" ".join("%s=%d" % kv for kv in sorted(seen.items())))
`

// floodNode is a Node client's loop through the proxy (@googleapis/youtube,
// its retries off: each would be a call of its own): floodCalls calls,
// counting the answers and the GaxiosErrors by status.
const floodNode = `
const {youtube} = require('@googleapis/youtube');
const [root, token, n] = process.argv.slice(1);
const yt = youtube({version: 'v3', auth: token, rootUrl: root + '/', retry: false});
(async () => {
  const seen = {};
  for (let i = 0; i < Number(n); i++) {
    let k = '200';
    try { await yt.videos.list({part: ['id'], chart: 'mostPopular', regionCode: 'DE'}); }
    catch (e) { k = String(e.status || (e.response && e.response.status)); }
    seen[k] = (seen[k] || 0) + 1;
  }
  console.log(Object.keys(seen).sort().map(k => k + '=' + seen[k]).join(' '));
})().catch(e => { console.error(e); process.exit(1); });
`

// floodCosts is a pool whose rate holds the daemon's chart at its
// cadence, small enough that a client without a share, half an hour
// before the upstream's reset, could take what that chart needs over the
// next day of the pool's window, were only the day until the reset kept.
const floodCosts = `pools:
  default: {limit: 9000, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
operations:
  videos.list:          {default: 1}
  videoCategories.list: {default: 1}
  i18nRegions.list:     {default: 1}
  search.list:          {search: 100}
  videos.batchGetStats: {stats: 1}
`

// The daemon and the proxy on one limiter, half an hour before the
// upstream's reset, four clients (two Go programs, a Python one and a
// Node one, each with its own token) flooding past their shares, then a
// fifth without a share flooding until what is left to clients is spent:
// the upstream's charge equals the ledger's to the unit, no client spends
// past its share, and the daemon's tier-1 chart keeps its cadence: the
// plan made after the flood states the cadence of the plan before it, every
// pass completed, and the chart's age within that cadence and one pass.
func TestProxyFloodBesideTheDaemon(t *testing.T) {
	h := newHarness(t)
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  team: {limit: 600, window: 1h, proxy: {daily: {default: 40}}}\n  greedy: {limit: 600, window: 1h}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	costs := filepath.Join(h.dir, "costs.yaml")
	if err := os.WriteFile(costs, []byte(floodCosts), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_API_PLANS", plans)
	h.set("INGEST_COSTS", costs)
	offset := h.clockAt(ingest.UpstreamReset(time.Now()).Add(-30 * time.Minute))
	h.fake.SetClock(func() time.Time { return time.Now().Add(offset) })
	tokens := map[string]string{}
	for _, name := range []string{"go-a", "go-b", "python", "node", "greedy"} {
		plan := "team"
		if name == "greedy" {
			plan = "greedy"
		}
		tokens[name] = lastLine(h.mustRun(0, "tokens", "add", name, "--plan", plan).stdout)
	}
	daemon := h.startFor(longTimeout, "run", "--every", "1m", "--regions", "US")
	db := openDB(t, h.db())
	completed := func() int64 {
		return queryInt(t, db, `SELECT count(*) FROM runs WHERE region = 'US' AND status = 'completed'`)
	}
	if !waitFor(longTimeout/2, func() bool { return completed() >= 1 }) {
		t.Fatalf("the daemon completed no pass of US\n%s", daemon.out)
	}
	proxy, base := startProxy(t, h)

	var wg sync.WaitGroup
	refused := map[string]int{}
	var mu sync.Mutex
	for _, name := range []string{"go-a", "go-b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc, err := youtube.NewService(context.Background(), option.WithEndpoint(base+"/"), option.WithAPIKey(tokens[name]))
			if err != nil {
				t.Error(err)
				return
			}
			for range floodCalls {
				_, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("JP").Do()
				var ge *googleapi.Error
				if errors.As(err, &ge) && ge.Code == http.StatusForbidden {
					mu.Lock()
					refused[name]++
					mu.Unlock()
				} else if err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}()
	}
	var pyOut []byte
	var pyErr error
	python := exec.Command("/usr/bin/python3", "-c", "import googleapiclient").Run() == nil
	if python {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pyOut, pyErr = exec.Command("/usr/bin/python3", "-c", floodPython, base, tokens["python"], "60").Output()
		}()
	} else {
		t.Log("Debian's python3-googleapi is missing: the Python client does not flood (scripts/ensure-tools.sh installs it)")
	}
	var nodeOut []byte
	var nodeErr error
	node := ""
	if _, err := exec.LookPath("npm"); err == nil {
		node = npmtest.Install(t, "@googleapis/youtube@39", "the Node client's flood")
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("node", "-e", floodNode, base, tokens["node"], "60")
			cmd.Dir = node
			nodeOut, nodeErr = cmd.Output()
		}()
	} else {
		t.Log("npm is missing: the Node client does not flood")
	}
	wg.Wait()
	if nodeErr != nil {
		t.Errorf("node: %v: %s", nodeErr, stderrOf(nodeErr))
	}
	if node != "" && strings.TrimSpace(string(nodeOut)) != "200=40 403=20" {
		t.Errorf("node's calls: %q, want 40 answered and 20 refused (403)", nodeOut)
	}
	if pyErr != nil {
		t.Errorf("python: %v: %s", pyErr, stderrOf(pyErr))
	}
	if python && strings.TrimSpace(string(pyOut)) != "200=40 403=20" {
		t.Errorf("python's calls: %q, want 40 answered and 20 refused (403)", pyOut)
	}
	for _, name := range []string{"go-a", "go-b"} {
		if refused[name] != floodCalls-40 {
			t.Errorf("%s was refused %d calls, want the %d past its share", name, refused[name], floodCalls-40)
		}
	}
	stated := holdsCadence(t, h, db, "during the flood", 0)
	// A client without a share spends what is left to clients, never what
	// the daemon's plan keeps for its tier-1 chart.
	svc, err := youtube.NewService(context.Background(), option.WithEndpoint(base+"/"), option.WithAPIKey(tokens["greedy"]))
	if err != nil {
		t.Fatal(err)
	}
	var took atomic.Int64
	var stopped sync.Once
	var stop *googleapi.Error
	var greedy sync.WaitGroup
	for range 4 {
		greedy.Add(1)
		go func() {
			defer greedy.Done()
			for took.Load() < 10000 {
				_, err := svc.Videos.List([]string{"id"}).Chart("mostPopular").RegionCode("FR").Do()
				var ge *googleapi.Error
				if errors.As(err, &ge) && ge.Code == http.StatusForbidden {
					stopped.Do(func() { stop = ge })
					return
				} else if err != nil {
					t.Errorf("greedy: %v", err)
					return
				}
				took.Add(1)
			}
		}()
	}
	greedy.Wait()
	// The plan the daemon makes once the client is stopped keeps US's
	// cadence: the client left, in the pool's window, what US needs over
	// the next whole window, so the pacer has no reason to stretch it.
	if every := replanned(t, db, time.Now().Add(offset), daemon); every > stated {
		t.Errorf("after the flood the daemon's plan runs US every %s, want its cadence of %s before it", every, stated)
	}
	// The daemon's next pass of US, after the flood, completes.
	last := queryInt(t, db, `SELECT coalesce(max(id), 0) FROM runs WHERE region = 'US'`)
	var next string
	if !waitFor(longTimeout/2, func() bool {
		return db.QueryRow(`SELECT status FROM runs WHERE region = 'US' AND id > ? AND status != 'running' ORDER BY id LIMIT 1`, last).Scan(&next) == nil
	}) {
		t.Fatalf("the daemon ran no pass of US after the flood\n%s", daemon.out)
	}
	if next != "completed" {
		t.Errorf("the daemon's pass of US after a client spent what was left to clients: %s, want completed\n%s", next, daemon.out)
	}
	holdsCadence(t, h, db, "after the flood", stated)
	if stop == nil || !strings.Contains(stop.Message, "left to clients") {
		t.Errorf("the client without a share took %d units and was stopped by %v, want what is left to clients named", took.Load(), stop)
	}
	t.Logf("the client without a share took %d units", took.Load())
	proxy.signal(t, syscall.SIGTERM)
	daemon.signal(t, syscall.SIGTERM)
	proxy.wait(longTimeout)
	daemon.wait(longTimeout)
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE region = 'US' AND status NOT IN ('completed', 'interrupted')`); n != 0 {
		t.Errorf("%d of the daemon's passes of US did not complete beside the clients\n%s", n, daemon.out)
	}
	for _, name := range []string{"go-a", "go-b", "python", "node"} {
		if n := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger WHERE client = ?`, name); n > 40 {
			t.Errorf("%s spent %d units, over its share of 40", name, n)
		}
	}
	var charged int64
	for _, u := range h.fake.ChargedBuckets(testKey) {
		charged += u
	}
	led := queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger
WHERE NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)`)
	if charged != led {
		t.Errorf("the upstream charged %d units, the ledger holds %d", charged, led)
	}
	t.Logf("the upstream charged %d units, the ledger holds %d; the daemon completed %d passes of US", charged, led, completed())
}

// holdsCadence fails t when the daemon's chart of US is older than the
// cadence its published plan states plus its longest pass: what report
// --json says of its age and its cadence, now; the cadence stated before,
// when given, since a plan that ran out of room states a slower one. It
// returns the cadence the plan states now.
func holdsCadence(t *testing.T, h *harness, db *sql.DB, when string, stated time.Duration) time.Duration {
	t.Helper()
	var rep struct {
		Pace struct {
			Source string `json:"source"`
			Charts []struct {
				Chart        string   `json:"chart"`
				AgeSeconds   *int64   `json:"age_seconds"`
				EverySeconds *float64 `json:"every_seconds"`
			} `json:"charts"`
		} `json:"pace"`
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &rep); err != nil {
		t.Fatal(err)
	}
	pass := time.Duration(queryInt(t, db, `SELECT coalesce(max(finished_ms - started_ms), 0) FROM runs WHERE region = 'US' AND status = 'completed'`)) * time.Millisecond
	for _, c := range rep.Pace.Charts {
		if c.Chart != "US" {
			continue
		}
		if rep.Pace.Source != "published" || c.AgeSeconds == nil || c.EverySeconds == nil {
			t.Fatalf("%s: the report's plan is %q, US's age %v and cadence %v: want the daemon's plan and both", when, rep.Pace.Source, c.AgeSeconds, c.EverySeconds)
		}
		every := time.Duration(*c.EverySeconds * float64(time.Second))
		// Ages are told in whole seconds.
		age, bound := time.Duration(*c.AgeSeconds)*time.Second, cmp.Or(stated, every)+pass+time.Second
		if age > bound {
			t.Errorf("%s: US is %s old, past its planned cadence of %s and its longest pass of %s", when, age, cmp.Or(stated, every), pass)
		}
		t.Logf("%s: US is %s old; its plan says every %s, its longest pass took %s", when, age, every, pass)
		return every
	}
	t.Fatalf("%s: the report's plan has no chart US", when)
	return 0
}

// replanned waits for a plan the daemon publishes after from (the house
// clock's time) and returns the cadence it states for US: a daemon that
// paces makes its plan again at least every floor.
func replanned(t *testing.T, db *sql.DB, from time.Time, daemon *proc) time.Duration {
	t.Helper()
	var doc string
	if !waitFor(longTimeout/2, func() bool {
		return db.QueryRow(`SELECT plan FROM pace_plans WHERE written_ms > ?`, from.UnixMilli()).Scan(&doc) == nil
	}) {
		t.Fatalf("the daemon published no plan after the flood\n%s", daemon.out)
	}
	var st pace.Status
	if err := json.Unmarshal([]byte(doc), &st); err != nil {
		t.Fatal(err)
	}
	for _, e := range st.Entries {
		if e.Name == "US" {
			t.Logf("the plan made after the flood runs US every %s", e.Every)
			return e.Every
		}
	}
	t.Fatalf("the plan made after the flood has no entry US: %s", doc)
	return 0
}
