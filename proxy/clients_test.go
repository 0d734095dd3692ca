package proxy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/npmtest"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/proxy"
)

// nodeYouTube is Node's official YouTube client, as npm names it.
const nodeYouTube = "@googleapis/youtube@39"

// The discovery document is the upstream's, with the proxy as its root:
// a client that builds itself from it calls the proxy. It is read without
// the key and charges nothing.
func TestDiscoveryIsRootedAtTheProxy(t *testing.T) {
	r := newRig(t, "")
	res, err := http.Get(r.url + "/discovery/v1/apis/youtube/v3/rest")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		RootURL   string `json:"rootUrl"`
		BaseURL   string `json:"baseUrl"`
		Resources map[string]struct {
			Methods map[string]struct {
				Path string `json:"path"`
			} `json:"methods"`
		} `json:"resources"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.RootURL != r.url+"/" || doc.BaseURL != r.url+"/" {
		t.Errorf("rootUrl %q baseUrl %q, want %q for both", doc.RootURL, doc.BaseURL, r.url+"/")
	}
	if p := doc.Resources["videos"].Methods["list"].Path; p != "youtube/v3/videos" {
		t.Errorf("videos.list's path %q, want the API's own document (youtube/v3/videos)", p)
	}
	if c := r.up.Fake.Charged(passtest.Key); c != 0 {
		t.Errorf("the discovery document charged %d units", c)
	}
}

// pythonClient is the script Python's official client runs through the
// proxy: a call that works, then one the pool refuses, as HttpError.
const pythonClient = `
import json, sys
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
root, token = sys.argv[1], sys.argv[2]
yt = build("youtube", "v3", developerKey=token, cache_discovery=False,
           discoveryServiceUrl=root + "/discovery/v1/apis/{api}/{apiVersion}/rest")
out = {"items": len(yt.videos().list(part="snippet", chart="mostPopular", regionCode="US").execute()["items"])}
for i in range(3):
    try:
        yt.search().list(part="id", q="music").execute()
    except HttpError as e:
        out["status"] = e.resp.status
        out["reason"] = json.loads(e.content)["error"]["errors"][0]["reason"]
        break
print(json.dumps(out))
`

// Python's official client (Debian's python3-googleapi), built from the
// proxy's discovery document with a token as its developerKey, makes its
// call, and meets the spent pool as its usual HttpError.
func TestPythonClientThroughTheProxy(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import googleapiclient").Run(); err != nil {
		t.Skip("Debian's python3-googleapi is not installed for /usr/bin/python3 (scripts/ensure-tools.sh installs it)")
	}
	r := newRig(t, daySearch)
	out, err := exec.Command("/usr/bin/python3", "-c", pythonClient, r.url, r.token).Output()
	if err != nil {
		t.Fatalf("python: %v: %s", err, stderrOf(err))
	}
	var got struct {
		Items  int
		Status int
		Reason string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python said %q: %v", out, err)
	}
	if got.Items == 0 || got.Status != http.StatusForbidden || got.Reason != "quotaExceeded" {
		t.Errorf("python: %+v, want videos, then HttpError 403 quotaExceeded", got)
	}
	if charged, led := r.up.Fake.Charged(passtest.Key), r.ledgerUnits(t); charged != led || charged != 3 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want 3 each", charged, led)
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// nodeClient is the script Node's official client (@googleapis/youtube)
// runs through the proxy: a call that works, then one the pool refuses.
// Its retries are off: gaxios would retry a 429 on its own, and each retry
// is a call the proxy meters.
const nodeClient = `
const {youtube} = require('@googleapis/youtube');
const [root, token] = process.argv.slice(1);
const yt = youtube({version: 'v3', auth: token, rootUrl: root + '/', retry: false});
(async () => {
  const out = {};
  const r = await yt.videos.list({part: ['snippet'], chart: 'mostPopular', regionCode: 'US'});
  out.items = r.data.items.length;
  for (let i = 0; i < 3; i++) {
    try { await yt.search.list({part: ['id'], q: 'music'}); }
    catch (e) {
      out.name = e.constructor.name;
      out.status = e.status || (e.response && e.response.status);
      out.reason = e.response.data.error.errors[0].reason;
      break;
    }
  }
  console.log(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
`

// Node's official client, given the proxy as its rootUrl and a token as its
// key, makes its call and meets the spent pool as a GaxiosError.
func TestNodeClientThroughTheProxy(t *testing.T) {
	dir := npmtest.Install(t, nodeYouTube, "Node's official client")
	r := newRig(t, daySearch)
	cmd := exec.Command("node", "-e", nodeClient, r.url, r.token)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderrOf(err))
	}
	var got struct {
		Items  int
		Name   string
		Status int
		Reason string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node said %q: %v", out, err)
	}
	if got.Items == 0 || got.Name != "GaxiosError" || got.Status != http.StatusForbidden || got.Reason != "quotaExceeded" {
		t.Errorf("node: %+v, want videos, then a GaxiosError 403 quotaExceeded", got)
	}
	if charged, led := r.up.Fake.Charged(passtest.Key), r.ledgerUnits(t); charged != led || charged != 3 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want 3 each", charged, led)
	}
}

// nodeRetries is the script Node's official client runs with its retries
// as they come (gaxios's defaults): one call the pool refuses for a
// minute, answered 429 with Retry-After.
const nodeRetries = `
const {youtube} = require('@googleapis/youtube');
const [root, token] = process.argv.slice(1);
const yt = youtube({version: 'v3', auth: token, rootUrl: root + '/'});
(async () => {
  try { await yt.search.list({part: ['id'], q: 'music'}); console.log(JSON.stringify({status: 200})); }
  catch (e) {
    const h = e.response.headers;
    console.log(JSON.stringify({name: e.constructor.name, status: e.status, retryAfter: Number(h.get ? h.get('retry-after') : h['retry-after'])}));
  }
})().catch(e => { console.error(e); process.exit(1); });
`

// Node's official client retries a 429 by itself, as the howto says:
// three times after the first call, each retry a call the proxy meets and
// refuses, none charged, without waiting for Retry-After.
func TestNodeClientRetriesA429ThriceWithoutRetryAfter(t *testing.T) {
	const minuteSearch = `
pools:
  default: {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 1, reserve: 0, window: 1m}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation
	dir := npmtest.Install(t, nodeYouTube, "Node's official client")
	r := newRigAt(t, minuteSearch, "", awayFromTheReset())
	if _, err := r.service(t, r.token).Search.List([]string{"id"}).Q("music").Do(); err != nil {
		t.Fatal(err)
	}
	// The bound stops a client that would wait for Retry-After (a minute)
	// before it retries: gaxios's own delays add up to a few seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "-e", nodeRetries, r.url, r.token)
	cmd.Dir = dir
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("node waited past the bound: its client now honours Retry-After, which the howto must say: %s", stderrOf(err))
	}
	if err != nil {
		t.Fatalf("node: %v: %s", err, stderrOf(err))
	}
	var got struct {
		Name       string
		Status     int
		RetryAfter int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node said %q: %v", out, err)
	}
	if got.Name != "GaxiosError" || got.Status != http.StatusTooManyRequests || got.RetryAfter < 1 {
		t.Errorf("node: %+v, want a GaxiosError 429 with Retry-After", got)
	}
	if n := r.seen[proxy.OutcomeRefused]; n != 4 {
		t.Errorf("the proxy refused %d of node's calls, want the first and gaxios's 3 retries", n)
	}
	if charged, led := r.up.Fake.Charged(passtest.Key), r.ledgerUnits(t); charged != 1 || led != 1 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want the first search's 1 each", charged, led)
	}
}
