package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ingestworks/ingest/regions"
)

// 8. report: what it shows, and that it changes nothing.
func TestReportWithoutADatabase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// report works on a host with no database yet (docs/contract.md):
	// every region never, the pools whole, and no file created.
	rep := h.report()
	for _, r := range rep.Regions {
		if r.Status != "never" {
			t.Errorf("region %s: status %q without a database, want never", r.Code, r.Status)
		}
	}
	if used, _, _, remaining, _, _ := rep.pool(t, "default"); used != 0 || remaining != 9500 {
		t.Errorf("pool default without a database: used %d remaining %d, want 0 and 9500", used, remaining)
	}
	h.mustRun(0, "report")
	// As report, the other read-only commands read a database that does not
	// exist yet as an empty one, exit 0, and say so (docs/contract.md),
	res := h.mustRun(0, "search", "football")
	if !strings.Contains(res.stderr, "no database at "+h.db()+" yet") || !strings.Contains(res.stderr, "ingest run") || res.stdout != "no matches\n" {
		t.Errorf("search: want no matches, and stderr saying there is no database and how to create one (ingest run):\n%s", res)
	}
	if res := h.mustRun(0, "search", "--json", "football"); strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("search --json without a database: want [], got %s", res)
	}
	// but export: an export of no database is no empty window, and a
	// scheduled one of a mistyped path must not pass for one
	if res := h.mustRun(2, "export", "--since", "2026-01-01"); res.stdout != "" || !strings.Contains(res.stderr, "--db / INGEST_DB: no database at "+h.db()) {
		t.Errorf("export without a database: want exit 2 naming --db / INGEST_DB and the path, nothing written, got %s", res)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("report created %s", h.db())
	}
}

// 5c. report on a host with no database: the pools come from Redis, which
// knows what another host spent, and no file is created.
func TestReportWithoutADatabaseAsksTheLimiter(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis()
	h.mustRun(0, "run", "--once", "--regions", "US")
	h.set("INGEST_DB", filepath.Join(h.dir, "elsewhere.db"))
	rep := h.report()
	if used, _, _, _, _, _ := rep.pool(t, "default"); used != 5 {
		t.Errorf("report without a database: default used %d, want the 5 units the other host spent", used)
	}
	if _, err := os.Stat(h.db()); err == nil {
		t.Errorf("report created %s", h.db())
	}
}

// report changes nothing, in the database or in Redis; its JSON names the
// quota key by a short hash of the API key, never the key, and the
// limiter it read.
func TestReportIsReadOnly(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "redis"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			var addr string
			if backend == "redis" {
				addr = h.withRedis().Addr
			}
			h.mustRun(0, "run", "--once", "--regions", "US,GB")
			files := []string{h.db(), h.db() + "-wal"}
			before := map[string][]byte{}
			for _, f := range files {
				before[f] = fileBytes(t, f)
			}
			var redisBefore map[string]string
			if addr != "" {
				redisBefore = redisDump(t, addr)
			}
			h.mustRun(0, "report")
			if rep := h.report(); rep.QuotaKey == "" || strings.Contains(rep.QuotaKey, testKey) || rep.Backend != backend {
				t.Errorf("quota_key %q backend %q: want a short hash of the key and %s", rep.QuotaKey, rep.Backend, backend)
			}
			h.mustRun(0, "search", "football")
			for _, f := range files {
				if after := fileBytes(t, f); !bytes.Equal(before[f], after) {
					t.Errorf("%s changed under report/search: %d bytes before, %d after", filepath.Base(f), len(before[f]), len(after))
				}
			}
			if addr != "" {
				after := redisDump(t, addr)
				if len(after) != len(redisBefore) {
					t.Errorf("Redis DBSIZE %d before report, %d after", len(redisBefore), len(after))
				}
				for k, v := range redisBefore {
					if after[k] != v {
						t.Errorf("Redis key %s changed under report:\nbefore %.300s\nafter  %.300s", k, v, after[k])
					}
				}
			}
		})
	}
}

// The report's plan and next runs follow the schedule a daemon recorded.
func TestReportFollowsTheDaemonsSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.start("run", "--every", "2h", "--regions", "DE")
	if !waitFor(30*time.Second, func() bool {
		if _, err := os.Stat(h.db()); err != nil {
			return false // not created yet: opening it here would create it under the daemon
		}
		var n int64
		db := openDB(t, h.db())
		_ = db.QueryRow(`SELECT count(*) FROM schedule`).Scan(&n)
		return n == 1
	}) {
		t.Fatalf("the daemon recorded no schedule\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(20 * time.Second)
	var raw struct {
		Schedule string `json:"schedule"`
		Plan     []struct {
			RunsPerDay float64 `json:"runs_per_day"`
			Regions    int     `json:"regions"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &raw); err != nil || len(raw.Plan) == 0 ||
		raw.Plan[0].RunsPerDay != 12 || raw.Plan[0].Regions != 1 || raw.Schedule != "the daemon's" {
		t.Errorf("report plan %+v (%v): want the daemon's 2h schedule of one region (12 runs a day)", raw, err)
	}

	// With a category, the daemon staggers two charts, DE and DE/10, in
	// its 2 hours (a slot per default region at least: DE/10 takes the
	// second, 2h/n after DE's): the report's next runs are that schedule's, and its plan
	// still counts one region.
	p = h.start("run", "--every", "2h", "--regions", "DE", "--categories", "music")
	if !waitFor(30*time.Second, func() bool {
		var regions string
		_ = openDB(t, h.db()).QueryRow(`SELECT regions FROM schedule`).Scan(&regions)
		return regions == "DE,DE/10"
	}) {
		t.Fatalf("the daemon did not record its two charts\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(20 * time.Second)
	next := map[string]time.Time{}
	for _, r := range h.report().Regions {
		if r.NextRun != nil {
			next[r.Code], _ = time.Parse(time.RFC3339, *r.NextRun)
		}
	}
	d := next["DE/10"].Sub(next["DE"]) % (2 * time.Hour)
	if d < 0 {
		d += 2 * time.Hour
	}
	if slot := 2 * time.Hour / time.Duration(len(regions.Default)); len(next) != 2 || d != slot {
		t.Errorf("next runs %v: want DE and DE/10 in slots %s apart (the daemon's stagger of two charts over 2h)", next, slot)
	}
	if err := json.Unmarshal([]byte(h.mustRun(0, "report", "--json").stdout), &raw); err != nil || len(raw.Plan) == 0 || raw.Plan[0].Regions != 1 {
		t.Errorf("report plan %+v (%v): want one region", raw, err)
	}
}

// 5b. A pass stopped by SIGTERM between pages is interrupted, not
// completed.
func TestInterruptedPassIsReportedSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.SetLatency(300 * time.Millisecond)
	p := h.start("run", "--once", "--regions", "US")
	if !waitFor(60*time.Second, func() bool { return trendingEntries(h.db()) >= 50 }) {
		t.Fatalf("no page stored within 60s\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	if code, ok := p.wait(20 * time.Second); !ok || code != 0 {
		t.Fatalf("exit %d (exited %v) after SIGTERM\n%s", code, ok, p.out)
	}
	if us := lastRunsAll(t, h, "US"); us.Status != "interrupted" || us.Pages >= 4 {
		t.Errorf("US run %+v: want interrupted before its 4 pages", us)
	}
}

// While the limiter cannot be reached, the report's used and remaining come
// from the ledger, and the units spent unmetered are spent: the upstream
// charged them, so REMAINING is less by them (JSON and text alike).
func TestReportDuringOutageSubtractsUnmeteredUnits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.withRedis().Stop()
	h.set("INGEST_RUN_LIMITER_UNREACHED_OK", "true") // the operator's word: an outage, not a mistyped URL
	h.mustRun(0, "run", "--once", "--regions", "US")
	_, units := fullPassUnits(h.fake, "US")
	if got := queryInt(t, openDB(t, h.db()), `SELECT coalesce(sum(units), 0) FROM ledger WHERE pool = 'default' AND unmetered = 1`); got != units {
		t.Fatalf("ledger holds %d unmetered units, want %d: the outage did not happen as planned", got, units)
	}
	rep := h.report()
	used, limit, reserve, remaining, _, _ := rep.pool(t, "default")
	if rep.UsedFrom != "ledger" || used != units || remaining != limit-reserve-units {
		t.Errorf("report during the outage: used_from %q, used %d, remaining %d; want ledger, %d, %d (%d-%d-%d unmetered)",
			rep.UsedFrom, used, remaining, units, limit-reserve-units, limit, reserve, units)
	}
	text := h.mustRun(0, "report").stdout
	if got := poolColumn(text, "default", "REMAINING"); got != fmt.Sprint(limit-reserve-units) {
		t.Errorf("report text: REMAINING %q in the default pool's row, want %d:\n%s", got, limit-reserve-units, text)
	}
}

// poolColumn is one cell of the report's pool table, by the column's
// heading (headings of two words are one; "5 in 24h" is one cell).
func poolColumn(text, pool, column string) string {
	var heads []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.NewReplacer("USED (WINDOW)", "USED_WINDOW", "USED TODAY", "USED_TODAY").Replace(line)
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "POOL":
			heads = f
		case len(f) > 0 && f[0] == pool && heads != nil:
			f = append(f[:4], f[6:]...) // "5 in 24h" is one cell
			for i, h := range heads {
				if h == column && i < len(f) {
					return f[i]
				}
			}
		}
	}
	return ""
}

func rep(h *harness) reportOut { return h.report() }

// TestReportShowsTheDaemonsPlan: after a pass, report --json's plan is
// the one the daemon printed at start, in every pool, tracking's units in
// the stats pool among them, at the default regions and at every region;
// and a report read with other costs than the daemon's says so in one
// line naming both, and shows the daemon's pools and plan.
func TestReportShowsTheDaemonsPlan(t *testing.T) {
	t.Parallel()
	for _, regionsFlag := range []string{"US,GB,DE,FR,IN,BR,AU,CA", "all"} {
		t.Run(regionsFlag, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			roomy := h.tightCosts(200000)
			h.mustRun(0, "run", "--once", "--regions", "US,GB")
			p := h.start("run", "--every", "1h", "--regions", regionsFlag, "--track-for", "7d", "--log-format", "json")
			if !waitFor(cmdTimeout, func() bool { return strings.Contains(p.out.String(), `"msg":"daemon started"`) || p.exited() }) || p.exited() {
				t.Fatalf("the daemon did not start\n%s", p.out)
			}
			p.signal(t, syscall.SIGTERM)
			p.wait(cmdTimeout)
			daemon := map[string]int64{}
			for _, l := range jsonLines(t, p.out.String()) {
				if l["msg"] == "plan" {
					daemon[l["pool"].(string)] = int64(l["units_per_day"].(float64))
				}
			}
			if daemon["stats"] == 0 || daemon["default"] == 0 {
				t.Fatalf("the daemon's plan lines: %v, want tracking's units in stats\n%s", daemon, p.out)
			}
			type reportPlan struct {
				CostsNote string `json:"costs_note"`
				Plan      []struct {
					Pool  string `json:"pool"`
					Units int64  `json:"units_per_day"`
				} `json:"plan"`
				Pools []struct {
					Name  string `json:"name"`
					Limit int64  `json:"limit"`
				} `json:"pools"`
			}
			read := func(args ...string) reportPlan {
				var rp reportPlan
				if err := json.Unmarshal([]byte(h.mustRun(0, append([]string{"report", "--json"}, args...)...).stdout), &rp); err != nil {
					t.Fatal(err)
				}
				return rp
			}
			same := read()
			got := map[string]int64{}
			for _, pl := range same.Plan {
				got[pl.Pool] = pl.Units
			}
			if !maps.Equal(got, daemon) {
				t.Errorf("report --json plan %v, want the daemon's %v", got, daemon)
			}
			if same.CostsNote != "" {
				t.Errorf("report with the daemon's costs says %q", same.CostsNote)
			}

			h.unset("INGEST_COSTS") // the shipped costs: not the daemon's
			other := read()
			if !strings.Contains(other.CostsNote, "are not the ones the schedule's run spends by") {
				t.Errorf("report with the shipped costs beside a daemon on %s: costs_note %q", roomy, other.CostsNote)
			}
			for _, pool := range other.Pools {
				if pool.Name == "default" && pool.Limit != 200000 {
					t.Errorf("report with other costs: default pool's limit %d, want the daemon's 200000", pool.Limit)
				}
			}
			if text := h.mustRun(0, "report").stdout; !strings.Contains(text, "Costs: this command's costs") {
				t.Errorf("report's text does not say the costs differ:\n%s", text)
			}
		})
	}
}
