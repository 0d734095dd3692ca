package jobs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/regions"
)

func result(region string, st ingest.RunStatus, err error, ids ...string) PassResult {
	o := Outcome{Region: region, Pages: 1, Videos: len(ids), VideoIDs: map[string]struct{}{},
		Units: map[string]int64{"default": 1}, Err: err}
	o.Status = st
	for _, id := range ids {
		o.VideoIDs[id] = struct{}{}
	}
	return PassResult{o}
}

// TestLogSummary: a video on two charts counts once among videos and
// twice among entries, and the passes not run are counted.
func TestLogSummary(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	LogSummary(log, []PassResult{
		result("US", ingest.StatusCompleted, nil, "a", "b"),
		result("GB", ingest.StatusCompleted, nil, "b"),
		result("DE", ingest.StatusFailed, errors.New("boom")),
	}, 4, 2, time.Second)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"charts": 4, "completed": 2, "failed": 1, "not_run": 1,
		ingest.LogPages: 3, ingest.LogVideos: 2, ingest.LogEntries: 3, ingest.LogUnits: 5}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v (line %s)", k, line[k], v, buf.String())
		}
	}
	if line["msg"] != "run --once" {
		t.Errorf("msg = %v", line["msg"])
	}
}

func TestFailed(t *testing.T) {
	t.Parallel()
	ok := result("US", ingest.StatusCompleted, nil)
	stopped := result("GB", ingest.StatusStopped, nil)
	if err := Failed([]PassResult{ok, stopped}, 3); err != nil {
		t.Fatalf("no pass failed: %v", err)
	}
	err := Failed([]PassResult{ok, result("DE", ingest.StatusFailed, errors.New("boom"))}, 3)
	if err == nil || err.Error() != "1 of 3 regions failed: DE: boom" {
		t.Fatalf("err = %v", err)
	}
	err = Failed([]PassResult{result("FR", ingest.StatusFailed, fmt.Errorf("take: %w", ingest.ErrUnavailable))}, 1)
	if err == nil || !strings.Contains(err.Error(), "1 of 1 regions failed: FR: take: ") ||
		!strings.Contains(err.Error(), ". The limiter did not answer") {
		t.Fatalf("err = %v", err)
	}
}

// TestOnceError: a fatal pass ends the run with one error that says where
// it stopped and how many regions did not run; without one, Failed's.
func TestOnceError(t *testing.T) {
	t.Parallel()
	fatal := func(region string, err error) PassResult {
		r := result(region, ingest.StatusFailed, err)
		r.Fatal = true
		return r
	}
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		name     string
		results  []PassResult
		planned  int
		endpoint string
		want     string
	}{
		{"all well", []PassResult{result("US", ingest.StatusCompleted, nil)}, 1, "", ""},
		{"one failed", []PassResult{result("US", ingest.StatusCompleted, nil), result("DE", ingest.StatusFailed, errors.New("boom"))}, 2, "",
			"1 of 2 regions failed: DE: boom"},
		{"bad key first", []PassResult{fatal("US", ingest.ErrBadKey)}, 8, "",
			ingest.ErrBadKey.Error() + " (stopped at US: 7 of 8 regions not run)"},
		{"bad key last", []PassResult{result("US", ingest.StatusCompleted, nil), fatal("GB", ingest.ErrBadKey)}, 2, "",
			ingest.ErrBadKey.Error() + " (stopped at GB: 1 of 2 regions failed)"},
		{"unreachable", []PassResult{fatal("US", fmt.Errorf("fetch: %w", dial))}, 3, "http://127.0.0.1:1/",
			"the upstream (http://127.0.0.1:1/) cannot be reached: " + dial.Error() +
				"; check --youtube-endpoint / YOUTUBE_ENDPOINT and the network (stopped at US: 2 of 3 regions not run)"},
		{"unreachable Google", []PassResult{fatal("US", dial)}, 1, "", "the upstream (Google's endpoint) cannot be reached"},
	} {
		err := OnceError(tc.results, tc.planned, tc.endpoint)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if (tc.want == "") != (err == nil) || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCause(t *testing.T) {
	t.Parallel()
	dns := &net.DNSError{Err: "no such host", Name: "nowhere.invalid"}
	op := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("get: %w", dns), dns.Error()},
		{fmt.Errorf("get: %w", op), op.Error()},
		{errors.New("other"), "other"},
	} {
		if got := Cause(tc.err); got != tc.want {
			t.Errorf("Cause(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestChartPasses(t *testing.T) {
	t.Parallel()
	like := Pass{QuotaKey: "k"}
	r := &Runner{Clock: clock.System, Passes: ChartPasses(regions.Charts("US", "GB"), []string{"", "10"}, like, slog.New(slog.DiscardHandler))}
	if got, want := strings.Join(r.Charts(), ","), "US,US/10,GB,GB/10"; got != want {
		t.Fatalf("charts = %s, want %s", got, want)
	}
	if got, want := strings.Join(ChartNames(regions.Charts("US", "GB"), []string{"", "10"}), ","), strings.Join(r.Charts(), ","); got != want {
		t.Errorf("ChartNames = %s, want the passes' %s", got, want)
	}
	for _, p := range r.Passes {
		if p.QuotaKey != "k" || p.Logger == nil {
			t.Errorf("pass %s: quota key %q, logger %v", p.Chart(), p.QuotaKey, p.Logger)
		}
	}
	if r.Passes[0] == r.Passes[1] {
		t.Error("passes share one Pass")
	}
}
