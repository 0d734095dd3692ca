package sim

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// logged is checkLog's findings on a good day whose daemon's log is log,
// with the world's faults set by world.
func logged(t *testing.T, log string, world func(h *History)) []string {
	t.Helper()
	h := history(hourly(24, 1), hourly(24, 60), 1)
	h.Log = filepath.Join(t.TempDir(), "daemon.log")
	if err := os.WriteFile(h.Log, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if world != nil {
		world(h)
	}
	return checkLog(h)
}

func TestCheckFindsAPanicInTheDaemonsLog(t *testing.T) {
	const calm = `time=2026-10-25T05:00:00.000Z level=INFO msg=pass region=US status=completed pages=1 videos=50 units=1 duration=0s
`
	if f := logged(t, calm, nil); len(f) != 0 {
		t.Errorf("a pass completed: %q", f)
	}
	const recovered = `time=2026-10-25T05:00:00.000Z level=ERROR msg="run panicked" region=US panic="runtime error: invalid memory address or nil pointer dereference" stack="goroutine 1"
time=2026-10-25T05:00:00.000Z level=ERROR msg=pass region=US status=failed pages=1 videos=50 units=1 duration=0s err="panic: runtime error: invalid memory address or nil pointer dereference"
`
	f := logged(t, recovered, func(h *History) {
		// a full disk at the time explains no panic
		h.Fulls = []Interval{{t0.Add(4 * time.Hour), t0.Add(6 * time.Hour)}}
	})
	if len(f) != 1 || !strings.Contains(f[0], "the daemon's log holds 2 lines of a recovered panic: time=2026-10-25T05:00:00.000Z level=ERROR msg=\"run panicked\"") {
		t.Errorf("a pass that panicked in a full disk: %q", f)
	}
}

func TestCheckFindsAWarningNoFaultExplains(t *testing.T) {
	at := func(h float64) time.Time { return t0.Add(time.Duration(h * float64(time.Hour))) }
	const (
		kept             = `time=2026-10-25T05:00:00.000Z level=WARN msg="keep the upstream's time in the ledger" err="keep the upstream's time: %!w(<nil>)"` + "\n"
		full             = `time=2026-10-25T05:00:00.000Z level=WARN msg="keep the upstream's time in the ledger" err="keep the upstream's time: ingest.db: the disk is full: SQLite could not write"` + "\n"
		clock            = `time=2026-10-25T05:00:00.000Z level=ERROR msg=pass region=US status=failed pages=0 err="page 1: fetch US videos.list: limiter: unavailable: the limiter's clock disagrees with the upstream's: this host's clock reads 2026-10-25T05:00:00Z"` + "\n"
		retried          = `time=2026-10-25T05:00:00.000Z level=WARN msg="upstream attempt failed; retrying" op=videos.list attempt=1 err="HTTP 503 backendError: The service is currently unavailable."` + "\n"
		stopped          = `time=2026-10-25T05:00:00.000Z level=WARN msg="pace: the limiter did not answer; keeping the plan" err="state: context canceled"` + "\n"
		lostData         = `time=2026-10-25T05:00:00.000Z level=WARN msg="the limiter lost data: metered calls wait until every ledger that spent in the window has put its calls back" quota_key=k` + "\n"
		outlived         = `time=2026-10-25T05:00:00.000Z level=WARN msg="the page in flight outlived the stop's bound: stopping now" bound=30s` + "\n"
		late             = `time=2026-10-25T05:00:00.000Z level=WARN msg="the region catalogue was not read from the upstream within --start-timeout: the daemon plans on the one stored, and goes on reading it behind" catalogue=stored` + "\n"
		copied           = `time=2026-10-25T05:00:00.000Z level=WARN msg="a worker ran on a copy of this database, and the copy's ledger holds calls this one lacks: counted in this worker's window" copy=copy.db calls=3` + "\n"
		stall            = `time=2026-10-25T05:00:00.000Z level=WARN msg="quota limiter unreachable: cheap calls go ahead unmetered within each pool's fail_open budget" quota_key=k err="read tcp: i/o timeout"` + "\n"
		refusedCatalogue = `time=2026-10-25T05:00:00.000Z level=WARN msg="the region catalogue was not read from the upstream: the stored one, else the built-in copy, serves" err="fetch the region catalogue i18nRegions.list: quota: i18nRegions.list refused until 2026-10-25T07:00:00Z"` + "\n"
		refund           = `time=2026-10-25T05:00:00.000Z level=WARN msg="reconcile a decision of unknown outcome" quota_key=k op=videos.list err="refund 1: read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout"` + "\n"
		backoff          = `time=2026-10-25T05:00:00.000Z level=WARN msg="backing off an upstream that fails every chart, as the database keeps it: no chart runs until then" cause="HTTP 503 backendError"` + "\n"
	)
	burst := func(from float64) func(h *History) {
		return func(h *History) {
			h.Faults = []Fault{{At: at(from), Calls: 1}}
			h.Calls[int(from)].Status = http.StatusServiceUnavailable // the chart's call of that hour
		}
	}
	for _, c := range []struct {
		name  string
		log   string
		world func(h *History)
		want  string
	}{
		{"the upstream's time kept, said failed", kept, nil, `1 WARN or ERROR lines of the daemon's log are explained by no fault of the world at their time: time=2026-10-25T05:00:00.000Z level=WARN msg="keep the upstream's time in the ledger"`},
		{"the upstream's time not kept on a full disk", full, func(h *History) { h.Fulls = []Interval{{at(4.5), at(5.5)}} }, ""},
		{"the full disk said after its spell", full, func(h *History) { h.Fulls = []Interval{{at(3), at(4)}} }, "1 WARN or ERROR lines"},
		{"a wrong Date refused the pass", clock, func(h *History) { h.Skews = []Interval{{at(4.8), at(4.8).Add(skewFor)}} }, ""},
		{"the clock disagreeing with a right Date", clock, func(h *History) { h.Skews = []Interval{{at(3), at(3).Add(skewFor)}} }, "1 WARN or ERROR lines"},
		{"a 503 retried in a burst", retried, burst(5), ""},
		{"a 503 retried an hour after the burst", retried, burst(4), "1 WARN or ERROR lines"},
		{"a cut answer retried", strings.ReplaceAll(retried, `HTTP 503 backendError: The service is currently unavailable.`, `malformed response from the upstream: unexpected end of JSON input`),
			func(h *History) { h.Calls[5].Cut = true }, ""},
		{"a cut answer said of a 200 whole", strings.ReplaceAll(retried, `HTTP 503 backendError: The service is currently unavailable.`, `malformed response from the upstream: unexpected end of JSON input`),
			nil, "1 WARN or ERROR lines"},
		{"a restart's plan cut short", stopped, func(h *History) { h.Down = []Interval{{at(5).Add(-time.Second), at(6)}} }, ""},
		{"a plan cut short with no stop", stopped, nil, "1 WARN or ERROR lines"},
		{"a backoff read at a start within it", backoff, burst(4), ""},
		{"a backoff read past the longest backoff", backoff, burst(2), "1 WARN or ERROR lines"},
		{"the Redis's loss found", lostData, func(h *History) { h.Losses = []time.Time{at(5).Add(-2 * time.Second)} }, ""},
		{"a loss the Redis never had", lostData, func(h *History) { h.Losses = []time.Time{at(3)} }, "1 WARN or ERROR lines"},
		{"the page in flight left at the stop's bound", outlived, func(h *History) {
			h.Terms = []Term{{At: at(5).Add(-30 * time.Second), Stopped: at(5).Add(time.Second)}}
		}, ""},
		{"the page in flight said left with no stop", outlived, nil, "1 WARN or ERROR lines"},
		{"a start in a wrong Date plans on the stored catalogue", late, func(h *History) { h.Skews = []Interval{{at(4.9), at(4.9).Add(skewFor)}} }, ""},
		{"a start plans on the stored catalogue, the upstream answering", late, nil, "1 WARN or ERROR lines"},
		{"a worker back from a copy", copied, func(h *History) { h.Moved = []Interval{{at(2), at(5).Add(-moveDown)}} }, ""},
		{"a copy's calls counted with no copy", copied, nil, "1 WARN or ERROR lines"},
		{"the Redis stalled", stall, func(h *History) { h.Stalls = []time.Time{at(5)} }, ""},
		{"the Redis said unreachable with no stall", stall, func(h *History) { h.Stalls = []time.Time{at(4)} }, "1 WARN or ERROR lines"},
		{"a refund the stalled Redis did not answer", refund, func(h *History) { h.Stalls = []time.Time{at(5)} }, ""},
		{"a refund timed out with no stall", refund, nil, "1 WARN or ERROR lines"},
		{"the limiter refuses the catalogue in a shape that spends its pool", refusedCatalogue, func(h *History) { h.Exhaust = true }, ""},
		{"the limiter refuses the catalogue with room to spare", refusedCatalogue, nil, "1 WARN or ERROR lines"},
		{"charts the pool cannot hold, on a pool that holds them",
			`time=2026-10-25T00:00:00.000Z level=WARN msg="the schedule (--every 1h0m0s, 1 charts) cannot fit the quota: default: 24 units a day planned, 9500 allowed"` + "\n", nil, "1 WARN or ERROR lines"},
	} {
		f := logged(t, c.log, c.world)
		switch {
		case c.want == "" && len(f) != 0:
			t.Errorf("%s: got %q, want nothing", c.name, f)
		case c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)):
			t.Errorf("%s: got %q, want %q", c.name, f, c.want)
		}
	}
}
