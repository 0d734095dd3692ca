package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// startProxy starts `ingest proxy` on a free loopback address and waits
// for it to answer.
func startProxy(t *testing.T, h *harness, args ...string) (*proc, string) {
	t.Helper()
	addr := closedAddr(t)
	p := h.start(append([]string{"proxy", "--listen", addr}, args...)...)
	base := "http://" + addr
	if !waitFor(30*time.Second, func() bool { return healthy(base + "/healthz") }) {
		t.Fatalf("ingest proxy never answered on %s\n%s", addr, p.out)
	}
	return p, base
}

// A call in flight when the proxy is told to stop is answered and stays
// charged; a call after the stop is never sent; the upstream's count and
// the ledger's, each call with its client, are one; /metrics counted the
// client's units.
func TestProxyStopsAfterTheCallsInFlight(t *testing.T) {
	h := newHarness(t)
	token := lastLine(h.mustRun(0, "tokens", "add", "ann", "--plan", "standard").stdout)
	p, base := startProxy(t, h)
	call := base + "/youtube/v3/videos?part=id&chart=mostPopular&regionCode=US&key=" + token
	if code, body := get(t, call); code != http.StatusOK {
		t.Fatalf("a call through the proxy: HTTP %d %s", code, body)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, `ingest_proxy_units_total{client="ann",outcome="forwarded"} 1`) {
		t.Errorf("/metrics does not count ann's forwarded unit:\n%s", body)
	}
	arrived, release := h.reqs.hold("/videos")
	defer release()
	inFlight := make(chan int, 1)
	go func() {
		res, err := http.Get(call)
		if err != nil {
			inFlight <- 0
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		inFlight <- res.StatusCode
	}()
	<-arrived
	p.signal(t, syscall.SIGTERM)
	if !waitFor(30*time.Second, func() bool { return !healthy(base + "/healthz") }) {
		t.Fatalf("the proxy still takes calls after SIGTERM\n%s", p.out)
	}
	if _, err := http.Get(call); err == nil {
		t.Errorf("a call after SIGTERM was taken")
	}
	release()
	if code := <-inFlight; code != http.StatusOK {
		t.Errorf("the call in flight at SIGTERM: HTTP %d, want its answer", code)
	}
	if code, exited := p.wait(30 * time.Second); !exited || code != 0 {
		t.Errorf("the proxy after SIGTERM: exited %v code %d, want 0\n%s", exited, code, p.out)
	}
	charged, led := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default")
	if charged != 2 || led != 2 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want the 2 calls sent", charged, led)
	}
	if n := queryInt(t, openDB(t, h.db()), `SELECT count(*) FROM ledger WHERE client = 'ann'`); n != 2 {
		t.Errorf("the ledger holds %d calls for ann, want 2", n)
	}
	if strings.Contains(p.out.String(), testKey) || strings.Contains(p.out.String(), token) {
		t.Errorf("the proxy's log holds the key or the token:\n%s", p.out)
	}
}

// Under the usual faults the upstream's count and the ledger's stay one:
// an upstream that fails a call charged it, and so does the ledger; with
// Redis down a cheap call goes ahead within its pool's fail_open budget,
// in the ledger, and a call of a pool without fail_open is never sent.
func TestProxyAccountsUnderFaults(t *testing.T) {
	h := newHarness(t)
	rs := h.withRedis()
	token := lastLine(h.mustRun(0, "tokens", "add", "ann", "--plan", "standard").stdout)
	p, base := startProxy(t, h)
	videos := base + "/youtube/v3/videos?part=id&chart=mostPopular&regionCode=US&key=" + token
	h.fake.FailNext(1, http.StatusServiceUnavailable)
	if code, _ := get(t, videos); code != http.StatusServiceUnavailable {
		t.Errorf("a call the upstream failed: HTTP %d, want the upstream's 503", code)
	}
	rs.Stop()
	if code, body := get(t, videos); code != http.StatusOK {
		t.Errorf("a cheap call with Redis down: HTTP %d %s, want it let through within fail_open\n%s", code, body, p.out)
	}
	sent := h.fake.Requests()
	if code, _ := get(t, base+"/youtube/v3/search?part=id&q=x&key="+token); code != http.StatusServiceUnavailable {
		t.Errorf("a search with Redis down: HTTP %d, want 503: its pool has no fail_open", code)
	}
	if h.fake.Requests() != sent {
		t.Errorf("the search reached the upstream with Redis down")
	}
	charged, led := h.fake.Charged(testKey), ledgerUnits(t, h.db(), "default")
	if charged != 2 || led != 2 {
		t.Errorf("the upstream charged %d units, the ledger holds %d: want the failed call and the unmetered one", charged, led)
	}
}

// A client's daily share holds across proxy processes: two proxies on one
// database (SQLite with its embedded limiter or Redis, PostgreSQL with its
// own), and four callers of one token on each, answer at most its share
// together; every call past it is refused unsent, and the upstream's
// charge equals the ledger's. Eight clients in turn meet the edge of their
// share eight times.
func TestProxySharesHoldAcrossProcesses(t *testing.T) {
	const clients, share = 8, 10
	for _, c := range []struct {
		name            string
		redis, postgres bool
	}{{"sqlite", false, false}, {"sqlite and redis", true, false}, {"postgresql", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			if c.redis {
				h.withRedis()
			}
			openLedger, arg := func() *sql.DB { return openDB(t, h.db()) }, "?"
			if c.postgres {
				u := h.withPostgres()
				openLedger, arg = func() *sql.DB { return openPG(t, u) }, "$1"
			}
			plans := filepath.Join(h.dir, "plans.yaml")
			if err := os.WriteFile(plans, []byte(fmt.Sprintf("plans:\n  team: {limit: 6000, window: 1h, proxy: {daily: {default: %d}}}\n", share)), 0o644); err != nil {
				t.Fatal(err)
			}
			h.set("INGEST_API_PLANS", plans)
			var bases []string
			for range 2 {
				_, base := startProxy(t, h)
				bases = append(bases, base)
			}
			db := openLedger()
			spent := func(client string) int64 {
				return queryInt(t, db, `SELECT coalesce(sum(units), 0) FROM ledger WHERE client LIKE `+arg+`
  AND NOT EXISTS (SELECT 1 FROM ledger_given_back g WHERE g.quota_key = ledger.quota_key AND g.call_id = ledger.call_id)`, client)
			}
			var answered, refused, other atomic.Int64
			for k := range clients {
				name := fmt.Sprintf("client-%d", k)
				token := lastLine(h.mustRun(0, "tokens", "add", name, "--plan", "team").stdout)
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						callUntilRefused(bases[i%2]+"/youtube/v3/videos?part=id&chart=mostPopular&regionCode=US&key="+token, 4, &answered, &refused, &other)
					}()
				}
				wg.Wait()
				if n := spent(name); n > share {
					t.Errorf("%s spent %d units through two proxies, over its share of %d", name, n, share)
				}
			}
			if other.Load() != 0 {
				t.Errorf("%d calls answered neither 200 nor 403", other.Load())
			}
			charged, led := h.fake.Charged(testKey), spent("%")
			if charged != answered.Load() || led != charged {
				t.Errorf("%d calls answered, the upstream charged %d units, the ledger holds %d: want each the same", answered.Load(), charged, led)
			}
			t.Logf("%d calls answered, %d refused; the upstream charged %d units, the ledger holds %d", answered.Load(), refused.Load(), charged, led)
		})
	}
}

// callUntilRefused makes n calls of url, counting each answer: 200, 403 or
// anything else (an error included).
func callUntilRefused(url string, n int, answered, refused, other *atomic.Int64) {
	c := &http.Client{Timeout: time.Minute}
	for range n {
		res, err := c.Get(url)
		if err != nil {
			other.Add(1)
			continue
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		switch res.StatusCode {
		case http.StatusOK:
			answered.Add(1)
		case http.StatusForbidden:
			refused.Add(1)
		default:
			other.Add(1)
		}
	}
}

// serve's /quota, given the plans file, says what is left to each later
// priority of the proxy's plans: what is left to clients less the daily
// shares of the plans before it.
func TestQuotaShowsWhatIsLeftToEachPriority(t *testing.T) {
	h := newHarness(t)
	plans := filepath.Join(h.dir, "plans.yaml")
	if err := os.WriteFile(plans, []byte("plans:\n  team: {limit: 600, window: 1h, proxy: {daily: {default: 1000}}}\n  batch: {limit: 600, window: 1h, proxy: {priority: 1}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.set("INGEST_API_PLANS", plans)
	token := lastLine(h.mustRun(0, "tokens", "add", "ann", "--plan", "team").stdout)
	_, base := startProxy(t, h)
	if code, body := get(t, base+"/youtube/v3/videos?part=id&chart=mostPopular&regionCode=US&key="+token); code != http.StatusOK {
		t.Fatalf("a call through the proxy: HTTP %d %s", code, body)
	}
	h.set("INGEST_UI_TOKEN", uiToken)
	site := startServe(t, h)
	req, err := http.NewRequest(http.MethodGet, site+"/quota", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+uiToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep struct {
		Left       map[string]int64            `json:"left_to_clients"`
		ByPriority map[string]map[string]int64 `json:"left_to_clients_by_priority"`
	}
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if left, got := rep.Left["default"], rep.ByPriority["1"]["default"]; left == 0 || got != max(left-1000, 0) {
		t.Errorf("/quota: %d left to clients of default, %d to priority 1, want the first less team's share of 1000", left, got)
	}
}
