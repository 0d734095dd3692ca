package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	// exist yet as an empty one, exit 0, and say so (docs/contract.md).
	res := h.mustRun(0, "search", "football")
	if !strings.Contains(res.stderr, "no database at "+h.db()+" yet") || !strings.Contains(res.stderr, "ingest run") || res.stdout != "no matches\n" {
		t.Errorf("search: want no matches, and stderr saying there is no database and how to create one (ingest run):\n%s", res)
	}
	if res := h.mustRun(0, "search", "--json", "football"); strings.TrimSpace(res.stdout) != "[]" {
		t.Errorf("search --json without a database: want [], got %s", res)
	}
	if res := h.mustRun(0, "export", "--since", "2026-01-01"); !strings.HasPrefix(res.stdout, "video_id,") || strings.Count(res.stdout, "\n") != 1 {
		t.Errorf("export without a database: want the CSV header alone, got %s", res)
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

func TestReportJSONHasTheDesignFields(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.mustRun(0, "run", "--once", "--regions", "US,GB")
	res := h.mustRun(0, "report", "--json")

	var raw map[string]any
	if err := json.Unmarshal([]byte(res.stdout), &raw); err != nil {
		t.Fatalf("report --json: %v\n%s", err, res.stdout)
	}
	requireKeys(t, "report", raw, "quota_key", "backend", "pools", "operations", "regions", "upstream_reset")
	for _, p := range raw["pools"].([]any) {
		requireKeys(t, "pools[]", p.(map[string]any), "name", "limit", "reserve", "used", "remaining", "free_at", "blocked_until")
	}
	for _, o := range raw["operations"].([]any) {
		requireKeys(t, "operations[]", o.(map[string]any), "op", "calls", "units")
	}
	for _, r := range raw["regions"].([]any) {
		requireKeys(t, "regions[]", r.(map[string]any), "code", "name", "status", "last_run", "videos", "units", "next_run")
	}

	if text := h.mustRun(0, "report"); !strings.HasSuffix(text.stdout, "\n") {
		t.Errorf("report's text does not end with a newline (the shell prompt lands on its last line): ...%q", text.stdout[max(0, len(text.stdout)-60):])
	}

	rep := h.report()
	if rep.QuotaKey == "" || strings.Contains(rep.QuotaKey, testKey) || rep.Backend != "sqlite" {
		t.Errorf("quota_key %q backend %q: want a short hash of the key and sqlite", rep.QuotaKey, rep.Backend)
	}
	used, limit, reserve, remaining, freeAt, blocked := rep.pool(t, "default")
	if used != 8 || limit != 10000 || reserve != 500 || remaining != 9492 || freeAt != nil || blocked != nil {
		t.Errorf("pool default: used %d limit %d reserve %d remaining %d free_at %v blocked_until %v; want 8 10000 500 9492 null null",
			used, limit, reserve, remaining, freeAt, blocked)
	}
	ops := map[string][2]int64{}
	for _, o := range rep.Operations {
		ops[o.Op] = [2]int64{int64(o.Calls), o.Units}
	}
	if ops["videos.list"] != [2]int64{6, 6} || ops["videoCategories.list"] != [2]int64{2, 2} {
		t.Errorf("operations %v, want videos.list 6 calls 6 units, videoCategories.list 2 calls 2 units", ops)
	}
	want := map[string][3]int64{"US": {200, 5}, "GB": {77, 3}}
	var codes []string
	for _, r := range rep.Regions {
		codes = append(codes, r.Code)
		if w, ok := want[r.Code]; ok {
			if r.Status != "completed" || int64(r.Videos) != w[0] || r.Units != w[1] || r.LastRun == nil || r.NextRun == nil {
				t.Errorf("region %s: %+v, want completed, %d videos, %d units, last_run and next_run set", r.Code, r, w[0], w[1])
			}
		} else if r.Status != "never" || r.LastRun != nil {
			t.Errorf("region %s: status %q last_run %v, want never and null", r.Code, r.Status, r.LastRun)
		}
	}
	if want := []string{"GB", "US"}; !slices.Equal(codes, want) {
		t.Errorf("regions %v, want the regions the database holds, by code, %v (no daemon recorded a schedule)", codes, want)
	}
	reset, err := time.Parse(time.RFC3339, rep.UpstreamReset)
	la, _ := time.LoadLocation("America/Los_Angeles")
	if err != nil || !reset.After(time.Now()) || reset.After(time.Now().Add(25*time.Hour)) ||
		reset.In(la).Hour() != 0 || reset.In(la).Minute() != 0 {
		t.Errorf("upstream_reset %q: want the next midnight in America/Los_Angeles", rep.UpstreamReset)
	}
}

func requireKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no field %q: %v", what, k, m)
		}
	}
}

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
			h.mustRun(0, "report", "--json")
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

// 5. The report tells the truth: skipped and interrupted, short notes, a
// legend, the daemon's schedule.
func TestReportStatusesNotesAndSchedule(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.fake.NoChart("GB")
	h.fake.FailNext(4, 500)
	h.mustRun(1, "run", "--once", "--regions", "US,GB,DE")
	rep := h.report()
	status := map[string]string{}
	for _, r := range rep.Regions {
		status[r.Code] = r.Status
	}
	if status["GB"] != "skipped" || status["US"] != "failed" || status["DE"] != "completed" {
		t.Errorf("statuses %v: want GB skipped, US failed, DE completed", status)
	}
	text := h.mustRun(0, "report").stdout
	usLine := regexp.MustCompile(`(?m)^US .*$`).FindString(text)
	if strings.Contains(usLine, "http://") || len(usLine) > 160 {
		t.Errorf("US note is not shortened to its reason: %q", usLine)
	}
	if !strings.Contains(text, "skipped: the upstream has no chart there") {
		t.Errorf("report has no status legend:\n%s", text)
	}

	p := h.start("run", "--every", "2h", "--regions", "DE")
	if !waitFor(30*time.Second, func() bool {
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
