package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/costs"
	"github.com/ingestworks/ingest/internal/rig/storetest"
	"github.com/ingestworks/ingest/jobs"
	"github.com/ingestworks/ingest/ledger"
	"github.com/ingestworks/ingest/regions"
	"github.com/ingestworks/ingest/report"
	"github.com/ingestworks/ingest/store"
	"github.com/ingestworks/ingest/wiring"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// stateLimiter answers State with fixed pools, or an error as an
// unreachable limiter does: the report's rendering is what is under test
// here, the limiter's own answers are tested in quota/.
type stateLimiter struct {
	states []ingest.PoolState
	err    error
}

func (l stateLimiter) State(context.Context) ([]ingest.PoolState, error) {
	return l.states, l.err
}
func (l stateLimiter) Backend() string { return "redis" }

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// reportDB is a database with one completed US run, one stopped GB run,
// their ledger, and an unmetered call.
func reportDB(t *testing.T) *store.DB {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	views := int64(1200)
	runs := []struct {
		region string
		at     time.Time
		pages  int
		end    ingest.RunEnd
	}{
		{"US", t0.Add(-3 * time.Hour), 2, ingest.RunEnd{Status: ingest.StatusCompleted}},
		{"GB", t0.Add(-90 * time.Minute), 1, ingest.RunEnd{Status: ingest.StatusStopped,
			Message: "quota refused videos.list", RetryAt: t0.Add(20 * time.Hour)}},
	}
	seq := 0
	for _, r := range runs {
		id, err := db.StartRun(ctx, r.region, "", ingest.Trending, r.at)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= r.pages; n++ {
			seq++
			call := ingest.Call{QuotaKey: "3f9a1c", ID: time.Duration(seq).String(), At: r.at.Add(time.Duration(n) * time.Second),
				Op: "videos.list", Region: r.region, RunID: id, Charges: []ingest.Charge{{Pool: "default", Units: 1}},
				Unmetered: r.region == "GB"}
			if err := ledger.New(db).RecordCall(ctx, call); err != nil {
				t.Fatal(err)
			}
			page := ingest.Page{Kind: ingest.Trending, Region: r.region, Number: n, Fetched: call.At,
				Videos: []ingest.Video{{ID: r.region + string(rune('a'+n)), Title: "Video", ViewCount: &views, PublishedAt: t0}}}
			if err := db.SavePage(ctx, id, page); err != nil {
				t.Fatal(err)
			}
		}
		r.end.At = r.at.Add(time.Minute)
		if err := db.FinishRun(ctx, id, r.end); err != nil {
			t.Fatal(err)
		}
	}
	search := ingest.Call{QuotaKey: "3f9a1c", ID: "search-1", At: t0.Add(-20 * time.Hour), Op: "search.list", Region: "DE",
		Charges: []ingest.Charge{{Pool: "default", Units: 100}, {Pool: "search", Units: 1}}}
	if err := ledger.New(db).RecordCall(ctx, search); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestReportGolden(t *testing.T) {
	costs := costs.Default()
	answering := stateLimiter{states: []ingest.PoolState{
		{Pool: "default", Limit: 10000, Reserve: 500, Used: 102, Remaining: 9398, Others: 1},
		{Pool: "search", Limit: 100, Reserve: 0, Used: 100, Remaining: 0, FreeAt: t0.Add(4 * time.Hour),
			BlockedUntil: t0.Add(23 * time.Hour)},
	}}
	cases := []struct {
		name    string
		limiter stateLimiter
		clock   *report.Clock
	}{
		{"report", answering, &report.Clock{Skew: 3 * time.Second, Seen: t0}},
		{"report-limiter-down", stateLimiter{err: errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")}, nil},
	}
	db := reportDB(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep, err := wiring.BuildReport(context.Background(), report.Sources{DB: wiring.On(db, ""), Limiter: c.limiter, Costs: costs,
				QuotaKey: "3f9a1c", Timetable: jobs.Timetable{Charts: regions.Charts(regions.Default...), Every: time.Hour}, Now: t0.Add(30 * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			rep.Clock = c.clock
			var text, js bytes.Buffer
			rep.Text(&text, time.UTC)
			if err := writeJSON(&js, rep.JSON()); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name+".txt", text.Bytes())
			golden(t, c.name+".json", js.Bytes())
		})
	}
}

// writeJSON writes v as report --json prints it.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run TestReportGolden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (rerun with -update if the change is meant):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
