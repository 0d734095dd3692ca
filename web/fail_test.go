package web

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestAnAnswerThatMetAFullDiskSaysItInTheLog: a request whose write (a
// token's use, the API's counts) met SQLite's full disk answers 500 with
// no detail, and the log line names the database, the disk and the fix,
// as every other path says a full disk.
func TestAnAnswerThatMetAFullDiskSaysItInTheLog(t *testing.T) {
	db := storetest.Open(t)
	var log bytes.Buffer
	s := &Server{cfg: Config{DB: db, Logger: slog.New(slog.NewTextHandler(&log, nil))}}
	w := httptest.NewRecorder()
	s.fail(w, httptest.NewRequest(http.MethodGet, "/api/v1/charts/US", nil), fmt.Errorf("api: token plan: %w", storetest.DiskFull(t, db)))
	if w.Code != http.StatusInternalServerError || strings.Contains(w.Body.String(), "disk") {
		t.Errorf("answered %d %q, want 500 with no detail", w.Code, w.Body)
	}
	if got := log.String(); !strings.Contains(got, db.Path()+": the disk is full") || !strings.Contains(got, "free space there") {
		t.Errorf("the log says %q, want the database, the disk and the fix", got)
	}
}
