package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

// trackedHistory is a day of hourly chart passes and tracking passes
// that each asked the upstream for 120 videos' counts in three calls, two
// lives of the process (the second from 12:00), and a log that tells
// each tracking pass's tracked and charted, and each life's plan of the
// videos a pass reads.
func trackedHistory(t *testing.T, tracked, charted, planned int) *History {
	t.Helper()
	h := history(hourly(24, 1), nil, 1)
	for i := range h.Runs {
		h.Runs[i].Finished = h.Runs[i].Started.Add(time.Minute)
	}
	h.Starts = append(h.Starts, t0.Add(12*time.Hour))
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	var log strings.Builder
	for _, life := range h.Starts {
		fmt.Fprintf(&log, "time=%s level=INFO msg=plan pool=stats regions=1 pages_per_cycle=1 cycles_per_day=24 tracked_videos=%d tracking_units_per_day=72 category_units_per_day=0 units_per_day=72 capacity=10000 fits=true\n",
			life.Add(time.Second).UTC().Format(time.RFC3339Nano), planned)
	}
	for hr := range 24 {
		at := t0.Add(time.Duration(hr)*time.Hour + 30*time.Minute)
		for k := range 3 {
			h.Calls = append(h.Calls, Call{At: at.Add(time.Duration(k) * time.Second), Path: "/youtube/v3/videos:batchGetStats", Kind: KindStats,
				Worker: WorkerDaemon, Status: 200, N: 40, Charged: map[string]int64{"default": h.Calls[len(h.Calls)-1].Charged["default"]}})
		}
		fmt.Fprintf(&log, "time=%s level=INFO msg=tracking entry=track status=completed tracked=%d charted=%d calls=3 units=3 duration=3s\n",
			at.Add(5*time.Second).UTC().Format(time.RFC3339Nano), tracked, charted)
	}
	if err := os.WriteFile(h.Log, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestCheckFindsTrackingToldOtherwiseThanItRead(t *testing.T) {
	if f := checkTrackingTold(trackedHistory(t, 120, 120, 120)); len(f) != 0 {
		t.Fatalf("every pass read the 120 charted, as planned: %q", f)
	}
	if f := checkTrackingTold(trackedHistory(t, 120, 130, 100)); len(f) != 0 {
		t.Errorf("120 of 130 charted read, 100 planned: %q", f)
	}
	f := checkTrackingTold(trackedHistory(t, 120, 0, 120))
	if len(f) != 1 || !strings.Contains(f[0], "24 of 24 tracking passes said they read more videos than were charted") ||
		!strings.Contains(f[0], "at 2026-10-25T00:30:05Z tracked=120 of charted=0") {
		t.Errorf("a line that says none charted: %q", f)
	}
	f = checkTrackingTold(trackedHistory(t, 150, 150, 150))
	if len(f) != 1 || !strings.Contains(f[0], "tracked=150, where the upstream answered the counts of 120 videos since the pass before") {
		t.Errorf("a line that says more read than the upstream answered: %q", f)
	}
	f = checkTrackingTold(trackedHistory(t, 120, 120, 240))
	if len(f) != 1 || f[0] != "the life started at 2026-10-25T12:00:00Z planned tracking at 240 videos a pass, and its 12 completed passes read 120 on average: the plan counts tracking's reads wrong" {
		t.Errorf("a plan of twice what the passes read, in a life started on charted videos (the first counts the charts' depth): %q", f)
	}
	if f := checkTrackingTold(trackedHistory(t, 120, 120, 50)); len(f) != 1 || !strings.Contains(f[0], "planned tracking at 50 videos a pass") {
		t.Errorf("a plan of under half what the passes read: %q", f)
	}
}

func TestCheckFindsARegionNamedOtherwiseThanTheCatalogue(t *testing.T) {
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Operator = []OperatorRead{{At: t0.Add(time.Hour), Names: map[string]string{"US": "United States", "GB": "United Kingdom", "XZ": ""}}}
	if f := checkRegionsNamed(h); len(f) != 0 {
		t.Fatalf("every region named as the catalogue names it, a code it does not name with none: %q", f)
	}
	h.Operator[0].Names["GB"] = ""
	h.Operator = append(h.Operator, OperatorRead{At: t0.Add(2 * time.Hour), Down: true, Names: map[string]string{"US": ""}})
	if f := checkRegionsNamed(h); len(f) != 1 || f[0] != `1 regions /api/v1/quota listed in 1 answers were not named as the region catalogue names them: at 2026-10-25T01:00:00Z GB named "", where the catalogue names it "United Kingdom"` {
		t.Errorf("GB listed with no name (a read while the process was down let be): %q", f)
	}
}

func TestCheckFindsALogLineWhoseKeyIsAValue(t *testing.T) {
	h := history(hourly(3, 1), nil, 1)
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	good := `time=2026-10-25T00:00:00.000Z level=INFO msg="signal: finishing the page in flight; a second signal stops at once" signal=SIGTERM bound=30s
time=2026-10-25T00:00:01.000Z level=INFO msg=pass region=US status=completed pages=4 err="a \"quoted\" word=x" units=3
`
	if err := os.WriteFile(h.Log, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkLogKeys(h); len(f) != 0 {
		t.Fatalf("every key a constant word: %q", f)
	}
	bad := good + `time=2026-10-25T00:00:02.000Z level=INFO msg="signal: finishing the page in flight" SIGTERM=signal bound=30s
time=2026-10-25T00:00:03.000Z level=INFO msg=pass region=US !BADKEY=4
`
	if err := os.WriteFile(h.Log, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkLogKeys(h); len(f) != 1 || !strings.HasPrefix(f[0], `2 log attributes have a key that is no plain identifier (a value, or !BADKEY, where a key goes): key "SIGTERM" in daemon.log: time=2026-10-25T00:00:02.000Z`) ||
		!strings.Contains(f[0], `key "!BADKEY" in daemon.log: time=`) {
		t.Errorf("a signal's name as a key, and slog's !BADKEY: %q", f)
	}
}

func TestCheckFindsAFailedPassThatWentOnAskingForPages(t *testing.T) {
	h := history(hourly(3, 1), nil, 1)
	at := t0.Add(90 * time.Minute)
	h.Runs = append(h.Runs, Run{ID: 9, Region: "US", Status: ingest.StatusFailed, Started: at, Finished: at.Add(time.Minute), Pages: 1})
	for k, token := range []string{"", "CDIQAA", "CGQQAA", "CJYBEAA"} {
		h.Calls = append(h.Calls, Call{At: at.Add(time.Duration(k) * time.Second), Kind: KindChart, Worker: WorkerDaemon, Status: 200,
			Region: "US", Page: token, Charged: map[string]int64{"default": 10}})
	}
	h.Calls = append(h.Calls, Call{At: at.Add(2 * time.Minute), Kind: KindChart, Worker: WorkerDaemon, Status: 200, Region: "US",
		Charged: map[string]int64{"default": 11}}) // the next pass's
	f := checkStoppedAtFailure(h)
	if len(f) != 1 || f[0] != "1 of 1 failed chart passes went on asking for pages past their failure (more than 2 past those stored): US's run 9 at 2026-10-25T01:30:00Z stored 1 pages, and was answered 4" {
		t.Errorf("a failed pass answered its four pages, one stored: %q", f)
	}
	h.Runs[len(h.Runs)-1].Pages = 2
	if f := checkStoppedAtFailure(h); len(f) != 0 {
		t.Errorf("a failed pass answered the page whose store failed and the next: %q", f)
	}
}

func TestCheckFindsALogLineNamingRegionsNotRun(t *testing.T) {
	h := history(hourly(3, 1), nil, 1)
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	good := `time=2026-10-25T00:00:00.000Z level=INFO msg=plan pool=default regions=8 pages_per_cycle=4
time=2026-10-25T00:00:01.000Z level=INFO msg=pass region=US status=completed pages=4
time=2026-10-25T00:00:02.000Z level=INFO msg="plan tier" tier=1 regions=US,US/10 every=1h0m0s
`
	if err := os.WriteFile(h.Log, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkRegionsSaid(h); len(f) != 0 {
		t.Fatalf("only US named, and counts: %q", f)
	}
	bad := good + `time=2026-10-26T00:00:00.000Z level=INFO msg="the region catalogue lists regions this daemon does not run: --regions all takes them at its next start" regions=AE,AR,AT,US
`
	if err := os.WriteFile(h.Log, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if f := checkRegionsSaid(h); len(f) != 1 || !strings.HasPrefix(f[0], "1 lines of the daemon's log name regions it does not run: regions=AE,AR,AT in time=2026-10-26T00:00:00.000Z") {
		t.Errorf("the catalogue's regions told to a daemon of US alone: %q", f)
	}
	h.Regions = "all"
	if f := checkRegionsSaid(h); len(f) != 0 {
		t.Errorf("a daemon at --regions all: %q", f)
	}
}
