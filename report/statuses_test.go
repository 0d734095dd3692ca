package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ingestworks/ingest/internal/rig/passtest"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestReportStatusesAndNotes: the report tells the truth about passes that
// did not complete: a chart the upstream does not have is skipped, one
// whose upstream kept failing failed, its note shortened to its reason,
// and the text has a legend of the statuses.
func TestReportStatusesAndNotes(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	up := passtest.New(t, db)
	up.Fake.NoChart("GB")
	up.Fake.FailNext(4, 500)
	for _, chart := range []string{"US", "GB", "DE"} {
		up.Pass(chart)
	}
	rep := reportOf(t, db)
	status := map[string]string{}
	for _, r := range rep.JSON().Regions {
		status[r.Code] = string(r.Status)
	}
	if status["GB"] != "skipped" || status["US"] != "failed" || status["DE"] != "completed" {
		t.Errorf("statuses %v: want GB skipped, US failed, DE completed", status)
	}
	var out bytes.Buffer
	rep.Text(&out, time.Local)
	text := out.String()
	usLine := regexp.MustCompile(`(?m)^US United States .*$`).FindString(text)
	if usLine == "" || !strings.Contains(usLine, "failed") || strings.Contains(usLine, "http://") || len(usLine) > 160 {
		t.Errorf("US's row of the regions is not failed with its note shortened to its reason: %q\n%s", usLine, text)
	}
	if !strings.Contains(text, "skipped: the upstream has no chart there") {
		t.Errorf("report has no status legend:\n%s", text)
	}
}
