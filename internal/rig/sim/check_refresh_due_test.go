package sim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest"
)

func TestCheckFindsARefreshPassThatFetchedNothingDue(t *testing.T) {
	day := 24 * time.Hour
	charted := Call{At: t0, Worker: WorkerDaemon, Status: http.StatusOK, Kind: KindChart, Region: "US", IDs: []string{"v1", "v2"}}
	due := t0.Add(ingest.RefreshAfter + time.Hour)
	pass := func(at time.Time) Pass { return Pass{Entry: "refresh", Status: ingest.StatusCompleted, Started: at} }
	byID := func(at time.Time, ids ...string) Call {
		return Call{At: at, Worker: WorkerDaemon, Status: http.StatusOK, Kind: KindByID, IDs: ids}
	}
	for _, c := range []struct {
		name   string
		passes []Pass
		calls  []Call
		want   string
	}{
		{"fetched at the pass due", []Pass{pass(due), pass(due.Add(6 * time.Hour))}, []Call{charted, byID(due, "v1", "v2")}, ""},
		{"nothing due yet", []Pass{pass(t0.Add(20 * day)), pass(due)}, []Call{charted, byID(due, "v1", "v2")}, ""},
		{"charted again in between", []Pass{pass(due), pass(due.Add(6 * time.Hour))},
			[]Call{charted, {At: due.Add(time.Hour), Worker: WorkerDaemon, Status: http.StatusOK, Kind: KindChart, IDs: []string{"v1", "v2"}}}, ""},
		{"a pass later", []Pass{pass(due), pass(due.Add(6 * time.Hour))}, []Call{charted, byID(due.Add(6*time.Hour), "v1", "v2")},
			"1 refresh passes fetched nothing with a video due"},
	} {
		h := &History{Config: Config{Days: 30, Start: t0}, End: t0.Add(30 * day), Passes: c.passes, Calls: c.calls}
		f := checkRefreshTookDue(h)
		if c.want == "" && len(f) != 0 || c.want != "" && (len(f) != 1 || !strings.Contains(f[0], c.want)) {
			t.Errorf("%s: %q, want %q", c.name, f, c.want)
		}
	}
}
