package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	"google.golang.org/api/youtube/v3"

	"github.com/ingestworks/ingest/internal/rig/npmtest"
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

// The daemon and the proxy on one limiter, four clients (two Go programs,
// a Python one and a Node one, each with its own token) flooding past their shares:
// the upstream's charge equals the ledger's to the unit, no client spends
// past its share, and the daemon's tier-1 chart keeps running, every pass
// of it completed.
func TestProxyFloodBesideTheDaemon(t *testing.T) {
	h := newHarness(t)
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  team: {limit: 600, window: 1h, proxy: {daily: {default: 40}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_API_PLANS", plans)
	tokens := map[string]string{}
	for _, name := range []string{"go-a", "go-b", "python", "node"} {
		tokens[name] = lastLine(h.mustRun(0, "tokens", "add", name, "--plan", "team").stdout)
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
	// The daemon's next pass, after the flood, completes too.
	before := completed()
	if !waitFor(longTimeout/2, func() bool { return completed() > before }) {
		t.Fatalf("the daemon completed no pass of US after the flood\n%s", daemon.out)
	}
	proxy.signal(t, syscall.SIGTERM)
	daemon.signal(t, syscall.SIGTERM)
	proxy.wait(longTimeout)
	daemon.wait(longTimeout)
	if n := queryInt(t, db, `SELECT count(*) FROM runs WHERE region = 'US' AND status NOT IN ('completed', 'interrupted')`); n != 0 {
		t.Errorf("%d of the daemon's passes of US did not complete beside the clients\n%s", n, daemon.out)
	}
	for name := range tokens {
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
