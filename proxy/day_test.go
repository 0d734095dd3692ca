package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/internal/rig/clocktest"
	"github.com/ingestworks/ingest/internal/rig/npmtest"
	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/pace"
	"github.com/ingestworks/ingest/regions"
)

// dayCosts is the shipped pools' shape (a 24-hour window and the Pacific
// day) small enough that the clients meet every budget within a day.
const dayCosts = `
pools:
  default: {limit: 400, reserve: 0, window: 24h, day: America/Los_Angeles}
  search:  {limit: 100, reserve: 0, window: 24h, day: America/Los_Angeles}
  stats:   {limit: 10000, reserve: 0, window: 24h, day: America/Los_Angeles}
` + everyOperation

// A driven day and more, across the Pacific reset: the daemon's pacer runs
// its tier-1 chart's real passes at its slots, and the three official
// clients, each with its own token, spend through the proxy at every slot
// until refused: a Python program and a Node script with a daily share
// each, the Go client without one (priority 1). The clients never read the
// clock, only the proxy and the pacer do, so the two interpreters are
// started once and told each slot on a line. Every slot's pass runs and
// completes; each share is spent whole on each Pacific day and never past;
// the client without a share spends on both days; every refusal is its
// client's usual quota error; the upstream's charge equals the ledger's on
// each day, the upstream's daily cap never met.
func TestThreeClientsSpendBesideThePacedDaemonAcrossTheReset(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import googleapiclient").Run(); err != nil {
		t.Skip("Debian's python3-googleapi is not installed for /usr/bin/python3 (scripts/ensure-tools.sh installs it)")
	}
	dir := npmtest.Install(t, nodeYouTube, "Node's official client")
	reset := ingest.UpstreamReset(time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC))
	start, end := reset.Add(-3*time.Hour), reset.Add(24*time.Hour)
	clk := clocktest.NewFake(start)
	r := newRigAt(t, dayCosts, `plans:
  team-a: {limit: 6000, window: 1h, proxy: {daily: {default: 40}}}
  team-b: {limit: 6000, window: 1h, proxy: {daily: {default: 40}}}
  batch:  {limit: 6000, window: 1h, proxy: {priority: 1}}
`, clk)
	r.up.Fake.SetClock(clk.Now)
	r.up.Fake.SetChartShape(100, 50)
	ctx := context.Background()
	pacer, slots := dayPacer(t, r, clk)
	py := startSlotClient(t, "", "/usr/bin/python3", "-c", pythonSlots, r.url, r.addToken(t, "python", "team-a"))
	node := startSlotClient(t, dir, "node", "-e", nodeSlots, r.url, r.addToken(t, "node", "team-b"))
	svc := r.service(t, r.addToken(t, "go", "batch"))
	var passes, missed int
	var chargedDay1 int64 = -1
	for slot := slots.Next(start.Add(-time.Nanosecond)); slot.Before(end); slot = slots.Next(slot) {
		clk.AdvanceTo(slot)
		pacer.Look(ctx) // the daemon's look, every --every
		if chargedDay1 < 0 && !slot.Before(reset) {
			chargedDay1 = r.up.Fake.Charged(passtest.Key)
		}
		if !pacer.Due(ctx, "US", slot) {
			missed++
			t.Errorf("the pacer did not run US at its slot %s", slot.Format(time.RFC3339))
			continue
		}
		res := r.up.Pass("US")
		pacer.Ran("US", res.Units, res.Daily, res.Status)
		if res.Status != ingest.StatusCompleted {
			t.Errorf("the pass of US at %s ended %s: %v", slot.Format(time.RFC3339), res.Status, res.Err)
		}
		passes++
		at := slot.Format(time.RFC3339)
		if got := py.spend(t); got.Name != "HttpError" || got.Status != http.StatusForbidden || got.Reason != "quotaExceeded" {
			t.Fatalf("python at %s: %+v, want its calls until an HttpError 403 quotaExceeded", at, got)
		}
		if got := node.spend(t); got.Name != "GaxiosError" || got.Status != http.StatusForbidden || got.Reason != "quotaExceeded" {
			t.Fatalf("node at %s: %+v, want its calls until a GaxiosError 403 quotaExceeded", at, got)
		}
		refused := false
		for range 400 {
			if _, err := svc.I18nRegions.List([]string{"snippet"}).Do(); err != nil {
				if ge := apiError(t, err); ge.Code != http.StatusForbidden || reason(ge) != "quotaExceeded" {
					t.Fatalf("go at %s: HTTP %d %s (%s), want a googleapi.Error 403 quotaExceeded once its budget is spent", at, ge.Code, reason(ge), ge.Message)
				}
				refused = true
				break
			}
		}
		if !refused {
			t.Fatalf("go at %s: never refused, want a googleapi.Error 403 quotaExceeded once the pool is spent", at)
		}
	}
	days := dayUnits(t, r, reset)
	for _, name := range []string{"python", "node"} {
		if days[0][name] != 40 || days[1][name] != 40 {
			t.Errorf("%s spent %d units the first Pacific day and %d the second, want its share of 40 on each", name, days[0][name], days[1][name])
		}
	}
	if days[0]["go"] == 0 || days[1]["go"] == 0 {
		t.Errorf("the client without a share spent %d and %d units, want some on each day", days[0]["go"], days[1]["go"])
	}
	charged := r.up.Fake.Charged(passtest.Key)
	if chargedDay1 != days[0]["all"] || charged-chargedDay1 != days[1]["all"] {
		t.Errorf("the upstream charged %d and %d units, the ledger holds %d and %d: want each day the same",
			chargedDay1, charged-chargedDay1, days[0]["all"], days[1]["all"])
	}
	t.Logf("%d passes of US, %d slots missed; by day, the ledger holds %v and %v", passes, missed, days[0], days[1])
}

// pythonSlots is Python's official client, built once from the proxy's
// discovery document: for each line read, it calls until the first
// refusal and prints how many answered and the refusal as it was raised.
const pythonSlots = `
import json, sys
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError
root, token = sys.argv[1], sys.argv[2]
yt = build("youtube", "v3", developerKey=token, cache_discovery=False,
           discoveryServiceUrl=root + "/discovery/v1/apis/{api}/{apiVersion}/rest")
for _ in sys.stdin:
    out = {"answered": 0}
    for i in range(400):
        try:
            yt.i18nRegions().list(part="snippet").execute()
            out["answered"] += 1
        except HttpError as e:
            out["name"] = type(e).__name__
            out["status"] = e.resp.status
            out["reason"] = json.loads(e.content)["error"]["errors"][0]["reason"]
            break
    print(json.dumps(out), flush=True)
`

// nodeSlots is pythonSlots in Node's official client, its retries off as
// in nodeClient.
const nodeSlots = `
const {youtube} = require('@googleapis/youtube');
const readline = require('readline');
const [root, token] = process.argv.slice(1);
const yt = youtube({version: 'v3', auth: token, rootUrl: root + '/', retry: false});
(async () => {
  for await (const _ of readline.createInterface({input: process.stdin})) {
    const out = {answered: 0};
    for (let i = 0; i < 400; i++) {
      try { await yt.i18nRegions.list({part: ['snippet']}); out.answered++; }
      catch (e) {
        out.name = e.constructor.name;
        out.status = e.status || (e.response && e.response.status);
        out.reason = e.response.data.error.errors[0].reason;
        break;
      }
    }
    console.log(JSON.stringify(out));
  }
})().catch(e => { console.error(e); process.exit(1); });
`

// slotClient is a client's program started once, told each slot on a line
// of its stdin, answering on a line of its stdout.
type slotClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *bytes.Buffer
}

// slotSpend is what a slotClient answers for one slot: the calls answered
// and the refusal that stopped it, as its client raised it.
type slotSpend struct {
	Answered int
	Name     string
	Status   int
	Reason   string
}

// startSlotClient starts name with args in dir ("": the test's) until t ends.
func startSlotClient(t *testing.T, dir, name string, args ...string) *slotClient {
	t.Helper()
	c := &slotClient{cmd: exec.Command(name, args...), stderr: &bytes.Buffer{}}
	c.cmd.Dir, c.cmd.Stderr = dir, c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewScanner(out)
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		// Its stdin's end is its own end; a client stuck past it is killed.
		c.in.Close()
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			c.cmd.Process.Kill()
			<-done
		}
	})
	return c
}

// spend tells c the slot has come and reads what it spent.
func (c *slotClient) spend(t *testing.T) slotSpend {
	t.Helper()
	if _, err := io.WriteString(c.in, "slot\n"); err != nil {
		t.Fatalf("%s: %v", c.cmd.Path, err)
	}
	if !c.out.Scan() {
		c.in.Close()
		c.cmd.Wait()
		t.Fatalf("%s ended before answering: %v: %s", c.cmd.Path, c.out.Err(), strings.TrimSpace(c.stderr.String()))
	}
	var got slotSpend
	if err := json.Unmarshal(c.out.Bytes(), &got); err != nil {
		t.Fatalf("%s said %q: %v", c.cmd.Path, c.out.Bytes(), err)
	}
	return got
}

// dayPacer is the daemon's pacer of one tier-1 chart, US, every half hour,
// publishing its plans to the rig's ledger as the daemon does, on clk.
func dayPacer(t *testing.T, r *rig, clk ingest.Clock) (*pace.Pacer, regions.Slots) {
	t.Helper()
	slots, err := regions.Stagger(30*time.Minute, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pace.New(pace.Config{Pools: r.up.Costs.Pools, State: r.up.Limiter.State, Clock: clk, Refresh: 30 * time.Minute,
		Entries: []pace.Entry{{Name: "US", Tier: 1, Floor: 30 * time.Minute, Cost: map[string]float64{"default": 2}, Slots: slots}},
		Daily:   map[string]float64{"default": 1}, Publish: pace.Keep(r.ledger, passtest.QuotaKey, slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	return p, slots
}

// dayUnits is what the ledger holds on each side of reset (given-back
// calls left out), by client ("" the daemon's) and all together ("all").
func dayUnits(t *testing.T, r *rig, reset time.Time) [2]map[string]int64 {
	t.Helper()
	calls, err := r.ledger.Calls(context.Background(), passtest.QuotaKey, reset.AddDate(0, 0, -3))
	if err != nil {
		t.Fatal(err)
	}
	days := [2]map[string]int64{{}, {}}
	for _, c := range calls {
		d := days[0]
		if !c.At.Before(reset) {
			d = days[1]
		}
		for _, ch := range c.Charges {
			d[c.Client] += ch.Units
			d["all"] += ch.Units
		}
	}
	return days
}
