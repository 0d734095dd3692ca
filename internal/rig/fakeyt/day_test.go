package fakeyt

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// A bucket spent is refused until the Pacific midnight, and on the day the
// clocks go back that midnight comes 25 hours after the one before: an
// hour after a day of 24 would have reset.
func TestASpentBucketIsRefusedUntilThePacificMidnight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		la, err := time.LoadLocation("America/Los_Angeles")
		if err != nil {
			t.Fatal(err)
		}
		f := New()
		f.SetBucketQuota(BucketDefault, 2)
		f.SetQuotaDay(la)
		call := func() int {
			rec := httptest.NewRecorder()
			f.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, basePath+"videos?part=snippet&chart=mostPopular&regionCode=US&key=k", nil))
			return rec.Code
		}
		at := func(s string) {
			t.Helper()
			when, err := time.Parse(time.RFC3339, s)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(when))
		}
		// Nov 1, 2026 in Los Angeles runs from 07:00 UTC to 08:00 UTC the
		// day after.
		at("2026-11-01T07:30:00Z")
		for i, want := range []int{200, 200, 403} {
			if got := call(); got != want {
				t.Fatalf("call %d of the day: %d, want %d", i+1, got, want)
			}
		}
		at("2026-11-02T07:30:00Z")
		if got := call(); got != 403 {
			t.Errorf("24h30m later, still Nov 1 in Los Angeles: %d, want 403", got)
		}
		at("2026-11-02T08:00:00Z")
		for i, want := range []int{200, 200, 403} {
			if got := call(); got != want {
				t.Errorf("call %d of Nov 2 in Los Angeles: %d, want %d", i+1, got, want)
			}
		}
	})
}
