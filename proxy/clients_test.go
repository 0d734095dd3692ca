package proxy_test

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/npmtest"
	"github.com/ingestworks/ingest/internal/rig/passtest"
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
