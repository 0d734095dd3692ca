package web

import (
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ingestworks/ingest"
	"github.com/ingestworks/ingest/clock"
	"github.com/ingestworks/ingest/internal/rig/storetest"
)

// TestCloseStopsTheWatcher: a page read starts the watcher; Close stops
// it within a read of the mark, long before a minute with no reader
// would, so that nothing reads the store once the site is closed.
func TestCloseStopsTheWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := storetest.Open(t)
		chartRun(t, db, "", time.Now(), ingest.Video{ID: "vid-a", Title: "Alpha"})
		s, err := New(Config{DB: db, Listen: "127.0.0.1:0", Clock: clock.System})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/charts/US", nil))
		if rec.Code != 200 || !s.answers.watching.Load() {
			t.Fatalf("a page read: %d, the watcher running %v", rec.Code, s.answers.watching.Load())
		}
		s.Close()
		time.Sleep(markEvery)
		synctest.Wait()
		if s.answers.watching.Load() {
			t.Fatal("the watcher still runs a read of the mark after Close")
		}
	})
}
